import { call, makeKey, makeOperator, signInOperator, withSession } from './support/access.js';
import { useHarness } from './support/harness.js';
import { ServiceProcess, startService } from './support/service.js';

/**
 * Two api processes on one database (API.md, "Identity and access"): a key revoked on one is
 * refused by the other within 5 s; an operator disabled, or given another role, on one has their
 * console session refused by the other within 5 s.
 */
// Each refused session below is a wrong credential from 127.0.0.1: a short throttle window keeps the test's own checks under the limit.
const QUICK_THROTTLE = { CREDENTIAL_THROTTLE_WINDOW_MS: '1000' };
const h = useHarness(QUICK_THROTTLE);
let b: ServiceProcess;

beforeAll(async () => {
  b = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api', ...QUICK_THROTTLE });
});
afterAll(async () => {
  await b?.stop();
});

/** Milliseconds until `refused` holds on process B (polled every 100 ms), at most 8 s. */
async function msUntil(refused: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < 8000) {
    if (await refused()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 100));
  }
  return Infinity;
}

describe('changes made on one process hold on the other within 5 s', () => {
  it('a revoked key', async () => {
    const key = await makeKey(h.svc.url, ['orders:read']);
    // B has the key in its cache.
    expect((await call(b.url, 'GET', '/admin/orders', { bearer: key.key })).status).toBe(200);
    expect((await call(h.svc.url, 'DELETE', `/admin/api-keys/${key.id}`)).status).toBe(200);
    expect(await msUntil(async () => (await call(b.url, 'GET', '/admin/orders', { bearer: key.key })).status === 401)).toBeLessThan(5000);
  });

  it('a disabled operator', async () => {
    const op = await makeOperator(h.svc.url, 'operator');
    const session = await signInOperator(b.url, op.email, op.password);
    expect((await withSession(b.url, session, 'GET', '/admin/orders')).status).toBe(200);
    expect((await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { disabled: true } })).status).toBe(200);
    expect(await msUntil(async () => (await withSession(b.url, session, 'GET', '/admin/orders')).status === 401)).toBeLessThan(5000);
    await expect(signInOperator(b.url, op.email, op.password)).rejects.toThrow(/401/);
  });

  it('a role changed: the session ends, and the next one has the new role', async () => {
    const op = await makeOperator(h.svc.url, 'admin');
    const session = await signInOperator(b.url, op.email, op.password);
    expect((await withSession(b.url, session, 'GET', '/admin/api-keys')).status).toBe(200);
    expect((await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { role: 'viewer' } })).status).toBe(200);
    expect(await msUntil(async () => (await withSession(b.url, session, 'GET', '/admin/api-keys')).status === 401)).toBeLessThan(5000);
    const again = await signInOperator(b.url, op.email, op.password);
    expect(again.body.role).toBe('viewer');
    const res = await withSession(b.url, again, 'GET', '/admin/api-keys');
    expect({ status: res.status, scope: res.body.requiredScope }).toEqual({ status: 403, scope: 'admin' });
  });

  it('a password changed: the old sessions end everywhere, the new password signs in', async () => {
    const op = await makeOperator(h.svc.url, 'viewer');
    const onA = await signInOperator(h.svc.url, op.email, op.password);
    const onB = await signInOperator(b.url, op.email, op.password);
    expect((await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { password: 'a-brand-new-password' } })).status).toBe(200);
    expect(await msUntil(async () => (await withSession(b.url, onB, 'GET', '/admin/orders')).status === 401)).toBeLessThan(5000);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await withSession(h.svc.url, onA, 'GET', '/admin/orders')).status).toBe(401);
    await expect(signInOperator(b.url, op.email, op.password)).rejects.toThrow(/401/);
    expect((await signInOperator(b.url, op.email, 'a-brand-new-password')).body.role).toBe('viewer');
  });
});
