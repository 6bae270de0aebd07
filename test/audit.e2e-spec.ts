import { randomUUID } from 'node:crypto';
import { call, makeKey, makeOperator, signInOperator, withSession } from './support/access.js';
import { useHarness } from './support/harness.js';
import { uniqueSku } from './support/orders.js';
import { expectProblem } from './support/problem.js';

/**
 * The audit log (API.md, "Audit"): sign-ins and sign-outs (failed ones with the email tried), keys
 * and operators made, changed and revoked, and every state-changing admin call by its route, with
 * the HTTP status; filtered by principal and action, newest first, paged.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });

async function audit(query = ''): Promise<any[]> {
  const res = await call(h.svc.url, 'GET', `/admin/audit${query}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The audit is written after the answer: wait until an entry shows. */
async function eventually(query: string, match: (e: any) => boolean): Promise<any> {
  for (let i = 0; i < 50; i++) {
    const found = (await audit(query)).find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no audit entry for ${query}`);
}

describe('the audit log', () => {
  it('records each kind of action with its principal, target and outcome', async () => {
    const key = await makeKey(h.svc.url, ['inventory:write']);
    const created = await eventually('?action=api_key.created', (e) => e.target === key.id);
    expect(created).toEqual({ id: expect.any(String), at: expect.any(String), principal: { type: 'root', id: null, name: null }, action: 'api_key.created', target: key.id, outcome: 201, requestId: expect.any(String), address: expect.any(String) });

    const sku = uniqueSku('AUD');
    expect((await call(h.svc.url, 'PUT', `/admin/inventory/${sku}`, { bearer: key.key, body: { priceMinor: 100, currency: 'USD', onHand: 3 } })).status).toBe(200);
    const put = await eventually(`?action=${encodeURIComponent('PUT /admin/inventory/{sku}')}`, (e) => e.target === sku);
    expect(put).toMatchObject({ principal: { type: 'api_key', id: key.id }, outcome: 200 });
    // A refused call is recorded with its status too.
    expect((await call(h.svc.url, 'PUT', `/admin/inventory/${sku}/locations/nowhere`, { bearer: key.key, body: { onHand: 1 } })).status).toBe(404);
    await eventually(`?action=${encodeURIComponent('PUT /admin/inventory/{sku}/locations/{locationId}')}`, (e) => e.target === sku && e.outcome === 404);

    expect((await call(h.svc.url, 'DELETE', `/admin/api-keys/${key.id}`)).status).toBe(200);
    await eventually('?action=api_key.revoked', (e) => e.target === key.id && e.outcome === 200);

    const op = await makeOperator(h.svc.url, 'operator');
    await eventually('?action=operator.created', (e) => e.target === op.id && e.outcome === 201);
    const session = await signInOperator(h.svc.url, op.email, op.password);
    const signIn = await eventually('?action=sign_in', (e) => e.principal?.id === op.id);
    expect(signIn).toMatchObject({ outcome: 200, target: op.email.toLowerCase(), principal: { type: 'operator', id: op.id, name: op.name } });

    const order = await h.api.order(randomUUID(), { customerId: 'c-aud', items: [{ sku, quantity: 1 }] });
    expect((await withSession(h.svc.url, session, 'POST', `/admin/orders/${order.body.id}/force-cancel`, { reason: 'audit' })).status).toBe(200);
    const forced = await eventually(`?principalId=${op.id}`, (e) => e.action === 'POST /admin/orders/{id}/force-cancel');
    expect(forced).toMatchObject({ target: order.body.id, outcome: 200, principal: { type: 'operator', id: op.id } });
    // A call the role may not make: recorded 403.
    expect((await withSession(h.svc.url, session, 'POST', `/admin/inventory/${sku}/adjustments`, { delta: 1, reason: 'received' })).status).toBe(403);
    await eventually(`?principalId=${op.id}`, (e) => e.action === 'POST /admin/inventory/{sku}/adjustments' && e.outcome === 403);

    expect((await withSession(h.svc.url, session, 'DELETE', '/console/session')).status).toBe(204);
    await eventually('?action=sign_out', (e) => e.principal?.id === op.id);

    expect((await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { role: 'viewer' } })).status).toBe(200);
    await eventually('?action=operator.changed', (e) => e.target === op.id && e.outcome === 200);
    // Reads are not state changes.
    expect((await audit('?action=' + encodeURIComponent('GET /admin/orders'))).length).toBe(0);
  });

  it('a failed sign-in is recorded with the email tried, never the password', async () => {
    const res = await fetch(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'Mallory@Example.test', password: 'guess-number-one' }) });
    expect(res.status).toBe(401);
    const failed = await eventually('?action=sign_in', (e) => e.target === 'mallory@example.test');
    expect(failed).toMatchObject({ outcome: 401, principal: null });
    const rows = await h.db.query<{ t: string }>(`SELECT row_to_json(a)::text AS t FROM audit_log a`);
    expect(rows.map((r) => r.t).join('\n')).not.toContain('guess-number-one');
  });

  it('a call naming what cannot be stored (U+0000 in a path parameter) is recorded all the same, the name made storable', async () => {
    const calls: [string, string, unknown, number][] = [
      ['POST', '/admin/orders/%00/force-cancel', { reason: 'x' }, 404],
      ['DELETE', '/admin/webhooks/a%00b', undefined, 404],
      ['PUT', `/admin/inventory/${uniqueSku('AUD')}/locations/%00`, { onHand: 1 }, 404],
    ];
    for (const [method, path, body, status] of calls) {
      const requestId = `audit-unstorable-${randomUUID()}`;
      const res = await call(h.svc.url, method, path, { body, headers: { 'x-request-id': requestId } });
      expect(res.status).toBe(status);
      const entry = await eventually('?limit=1000', (e) => e.requestId === requestId);
      expect(entry).toMatchObject({ outcome: res.status });
      expect(entry.target ?? '').not.toContain('\u0000');
    }
  });

  it('filters combine, newest first, pages follow one another', async () => {
    const key = await makeKey(h.svc.url, ['inventory:write']);
    const sku = uniqueSku('PAGE');
    for (let i = 0; i < 5; i++) expect((await call(h.svc.url, 'PUT', `/admin/inventory/${sku}`, { bearer: key.key, body: { priceMinor: 100, currency: 'USD', onHand: i } })).status).toBe(200);
    for (let i = 0; i < 50 && (await audit(`?principalId=${key.id}`)).length < 5; i++) await new Promise((r) => setTimeout(r, 100));
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await call(h.svc.url, 'GET', `/admin/audit?principalId=${key.id}&action=${encodeURIComponent('PUT /admin/inventory/{sku}')}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    const ids = seen.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expectProblem((await call(h.svc.url, 'GET', '/admin/audit?cursor=abc.def')) as never, 400, 'VALIDATION_FAILED');
    expectProblem((await call(h.svc.url, 'GET', '/admin/audit?limit=0')) as never, 400, 'VALIDATION_FAILED');
    expectProblem((await call(h.svc.url, 'GET', '/admin/audit', { bearer: key.key })) as never, 403, 'FORBIDDEN');
  });
});
