import { randomBytes, randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { Answer, client, loopbackAddress, waitFor } from './support/http.js';
import { expectProblem } from './support/problem.js';
import { ServiceProcess, startService } from './support/service.js';

/**
 * Wrong credentials are throttled wherever they are presented (API.md, "Errors"): after 5 wrong
 * ones — bearer tokens on /admin/* and /tcc/*, sign-in tokens, session cookies that are no session —
 * from one client address within the window, every request from it that presents a credential is
 * 429 with Retry-After until the window is over, the right one too; requests without a credential
 * are unaffected. Each test speaks from an address of its own (loopbackAddress). The window is
 * CREDENTIAL_THROTTLE_WINDOW_MS (the contract's minute), shortened here.
 */
const WINDOW_MS = 4000;
const h = useHarness({ CREDENTIAL_THROTTLE_WINDOW_MS: String(WINDOW_MS) });
const WRONG = 'Bearer not-the-admin-token-0000';
const RIGHT = `Bearer ${ADMIN_TOKEN}`;

const from = (address = loopbackAddress()) => client(h.svc.url, { from: address });
const bearer = (c: ReturnType<typeof client>, authorization: string, path = '/admin/orders?limit=1') => c.send('GET', path, { headers: { authorization } });
const aCookie = () => `tcc_console=${randomBytes(32).toString('base64url')}`;

function expectThrottled(res: Answer): void {
  expectProblem(res, 429, 'RATE_LIMITED');
  const wait = Number(res.headers.get('retry-after'));
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));
}

let sku: string;
beforeAll(async () => {
  sku = `THR-${randomUUID().slice(0, 8)}`;
  expect((await h.api.putSku(sku, 100)).status).toBe(200);
});

describe('bearer tokens', () => {
  it('5 wrong bearers, then every request presenting a credential is 429 — the right bearer, sign-in, a session, /tcc/* — until the window ends; other addresses and requests without a credential are unaffected', async () => {
    const c = from();
    for (let i = 0; i < 5; i++) expectProblem(await bearer(c, WRONG), 401, 'UNAUTHORIZED');
    expectThrottled(await bearer(c, WRONG));
    expectThrottled(await bearer(c, RIGHT));
    expectThrottled(await bearer(c, RIGHT, '/admin/stats'));
    expectThrottled(await c.send('POST', '/tcc/inventory/cancel', { body: { transactionId: 't-thr' }, headers: { authorization: RIGHT } }));
    expectThrottled(await c.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } }));
    const session = await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } }); // another address signs in
    expect(session.status).toBe(200);
    const cookie = session.headers.get('set-cookie')!.split(';')[0];
    expectThrottled(await c.send('GET', '/admin/orders?limit=1', { headers: { cookie } }));
    expectThrottled(await c.send('GET', '/console/session', { headers: { cookie } }));
    // Without a credential: as ever.
    expectProblem(await c.get('/admin/orders'), 401, 'UNAUTHORIZED');
    expect((await c.get(`/inventory/${sku}`)).status).toBe(200);
    const order = await c.order(randomUUID(), { customerId: 'c-thr', items: [{ sku, quantity: 1 }] });
    expect(order.status).toBe(201);
    expect((await c.post(`/orders/${order.body.id}/confirm`, {})).status).toBe(200);
    expect((await c.get('/health/live')).status).toBe(200);
    // Another address, and the same session from it: unaffected.
    expect((await bearer(from(), RIGHT)).status).toBe(200);
    expect((await from().send('GET', '/admin/orders?limit=1', { headers: { cookie } })).status).toBe(200);
    // Once the window is over, the right bearer works again.
    await waitFor('the window to end', async () => (await bearer(c, RIGHT)).status === 200, WINDOW_MS + 3000, 250);
  });

  it('12 wrong bearers at once: 5 answered 401, 7 answered 429, however they interleave', async () => {
    const c = from();
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => bearer(c, WRONG, i % 2 ? '/admin/orders?limit=1' : '/admin/stats')));
    expect(burst.map((r) => r.status).sort()).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expectThrottled(await bearer(c, RIGHT));
  });

  it('any Authorization header on a protected route is a credential: another scheme, an empty bearer, /tcc/*', async () => {
    const c = from();
    const tries: (() => Promise<Answer>)[] = [
      () => bearer(c, `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`),
      () => bearer(c, 'Bearer '),
      () => bearer(c, ADMIN_TOKEN),
      () => c.send('POST', '/tcc/inventory/try', { body: { transactionId: 't-x', items: [{ sku, quantity: 1 }] }, headers: { authorization: WRONG } }),
      () => c.send('GET', '/admin/queues', { headers: { authorization: WRONG } }),
    ];
    for (const t of tries) expectProblem(await t(), 401, 'UNAUTHORIZED');
    expectThrottled(await tries[0]());
    expectThrottled(await bearer(c, RIGHT, '/admin/queues'));
  });
});

describe('other credentials count the same', () => {
  it('wrong sign-in tokens throttle the bearer (and the bearer the sign-in)', async () => {
    const c = from();
    for (let i = 0; i < 5; i++) expectProblem(await c.send('POST', '/console/session', { body: { token: 'not-the-admin-token-0000' } }), 401, 'UNAUTHORIZED');
    expectThrottled(await bearer(c, RIGHT));
    expectThrottled(await c.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } }));
    // A sign-in whose body is invalid judges no token: not counted, but refused 429 while throttled.
    expectThrottled(await c.send('POST', '/console/session', { body: { nope: 1 } }));
    const d = from();
    for (let i = 0; i < 3; i++) expect((await d.send('POST', '/console/session', { body: { nope: 1 } })).status).toBe(400);
    for (let i = 0; i < 5; i++) expectProblem(await bearer(d, WRONG), 401, 'UNAUTHORIZED');
    expectThrottled(await d.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } }));
  });

  it('session cookies that are no session: counted on /admin/* and /console/session, dropped, then 429 for a live one too', async () => {
    const c = from();
    const dead = await c.send('GET', '/admin/orders?limit=1', { headers: { cookie: aCookie() } });
    expectProblem(dead, 401, 'UNAUTHORIZED');
    expect(dead.headers.get('set-cookie')).toMatch(/^tcc_console=; Max-Age=0/);
    expectProblem(await c.send('GET', '/console/session', { headers: { cookie: aCookie() } }), 401, 'UNAUTHORIZED');
    expectProblem(await c.send('POST', '/admin/orders/bulk-cancel', { body: {}, headers: { cookie: 'tcc_console=short' } }), 401, 'UNAUTHORIZED');
    expectProblem(await c.send('DELETE', '/console/session', { headers: { cookie: aCookie(), 'x-csrf-token': 'x' } }), 401, 'UNAUTHORIZED');
    expectProblem(await c.send('GET', '/admin/stats', { headers: { cookie: aCookie() } }), 401, 'UNAUTHORIZED');
    expectThrottled(await c.send('GET', '/admin/stats', { headers: { cookie: aCookie() } }));
    const live = (await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } })).headers.get('set-cookie')!.split(';')[0];
    expectThrottled(await c.send('GET', '/admin/stats', { headers: { cookie: live } }));
    // A cookie of another name is no credential.
    expectProblem(await from().send('GET', '/admin/stats', { headers: { cookie: 'theme=dark' } }), 401, 'UNAUTHORIZED');
  });

  it('wrong bearers sent beside a live session cookie: judged on the bearer, counted, then 429 — the session neither answers for them nor is dropped', async () => {
    const live = (await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } })).headers.get('set-cookie')!.split(';')[0];
    const c = from();
    for (let i = 0; i < 5; i++) {
      const res = await c.send('GET', '/admin/orders?limit=1', { headers: { cookie: live, authorization: `${WRONG}-${i}` } });
      expectProblem(res, 401, 'UNAUTHORIZED');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    expectThrottled(await c.send('GET', '/admin/orders?limit=1', { headers: { cookie: live, authorization: RIGHT } }));
    expectThrottled(await c.send('GET', '/admin/orders?limit=1', { headers: { cookie: live } }));
    // The session itself is untouched: from another address it still signs the console in.
    expect((await from().send('GET', '/admin/orders?limit=1', { headers: { cookie: live } })).status).toBe(200);
  });

  it('a burst of wrong credentials of every kind at once: 5 answered 401 in all', async () => {
    const c = from();
    const calls = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 0
        ? bearer(c, WRONG)
        : i % 3 === 1
          ? c.send('GET', '/admin/stats', { headers: { cookie: aCookie() } })
          : c.send('POST', '/console/session', { body: { token: `wrong-token-${i}-000000` } }),
    );
    const statuses = (await Promise.all(calls)).map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
  });
});

describe('sign-in: counted before it is judged', () => {
  const signIn = (c: ReturnType<typeof client>, body: Record<string, string>) => c.send('POST', '/console/session', { body });
  const operator = async (): Promise<{ email: string; password: string }> => {
    const email = `thr-${randomUUID().slice(0, 8)}@example.test`;
    const password = 'the right password 1';
    expect((await h.api.admin('POST', '/admin/operators', { email, name: 'Thr', role: 'viewer', password })).status).toBe(201);
    return { email, password };
  };

  it('11 wrong admin tokens and the right one, sent at once: 5 judged (401), the rest refused unjudged (429) — the right one among them', async () => {
    const c = from();
    const calls = Array.from({ length: 11 }, (_, i) => signIn(c, { token: `wrong-token-${i}-000000` }));
    calls.push(signIn(c, { token: ADMIN_TOKEN }));
    const answers = await Promise.all(calls);
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expectThrottled(answers[11]);
  });

  it("11 wrong passwords and the right one, sent at once: 5 passwords judged, the right one refused 429 with the rest", async () => {
    const { email, password } = await operator();
    const c = from();
    const calls = Array.from({ length: 11 }, (_, i) => signIn(c, { email, password: `a wrong password ${i}` }));
    calls.push(signIn(c, { email, password }));
    const answers = await Promise.all(calls);
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expectThrottled(answers[11]);
    // The account itself is not locked: from another address the right password signs in.
    expect((await signIn(from(), { email, password })).status).toBe(200);
  });

  it("one account's 14 wrong passwords and its right one, each from an address of its own, at once: at most 10 wrong ones judged, the rest refused for the account; then even the right one waits", async () => {
    const { email, password } = await operator();
    const calls = Array.from({ length: 14 }, (_, i) => signIn(from(), { email, password: `a wrong password ${i}` }));
    calls.push(signIn(from(), { email, password }));
    const answers = await Promise.all(calls);
    const wrong = answers.slice(0, 14).map((r) => r.status);
    // Each attempt is counted before it is judged (the account's lookup comes first, so the
    // attempts reach the count in any order): no more than 10 wrong ones judged, the others refused.
    expect(wrong.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(wrong.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(wrong.filter((s) => s === 401).length).toBeGreaterThanOrEqual(9);
    expect([200, 429]).toContain(answers[14].status);
    const refused = await signIn(from(), { email, password });
    expectProblem(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('a sign-in refused 429 before it is judged is audited as a failed one, with the email tried', async () => {
    const c = from();
    for (let i = 0; i < 5; i++) expectProblem(await bearer(c, WRONG), 401, 'UNAUTHORIZED');
    const email = `Throttled-${randomUUID().slice(0, 8)}@Example.test`;
    expectThrottled(await signIn(c, { email, password: 'never judged here' }));
    await waitFor(
      'the audit entry',
      async () => ((await h.api.admin('GET', '/admin/audit?action=sign_in&limit=1000')).body.data as { target: string; outcome: number }[]).some((e) => e.target === email.toLowerCase() && e.outcome === 429),
      5_000,
      100,
    );
  });

  it('right sign-ins are taken back, not counted: 8 in a row from one address all sign in, and 5 wrong ones still answer 401 before the 429', async () => {
    const { email, password } = await operator();
    const c = from();
    for (let i = 0; i < 4; i++) expect((await signIn(c, { token: ADMIN_TOKEN })).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await signIn(c, { email, password })).status).toBe(200);
    for (let i = 0; i < 5; i++) expectProblem(await signIn(c, { email, password: `a wrong password ${i}` }), 401, 'UNAUTHORIZED');
    expectThrottled(await signIn(c, { email, password }));
  });
});

describe('shared by every process', () => {
  let second: ServiceProcess;
  beforeAll(async () => {
    second = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api', CREDENTIAL_THROTTLE_WINDOW_MS: String(WINDOW_MS) });
  });
  afterAll(async () => {
    await second?.stop();
  });

  it('wrong credentials sent to two processes add up', async () => {
    const address = loopbackAddress();
    const one = client(h.svc.url, { from: address });
    const two = client(second.url, { from: address });
    for (const c of [one, two, one, two, one]) expectProblem(await bearer(c, WRONG), 401, 'UNAUTHORIZED');
    expectThrottled(await bearer(two, RIGHT));
    expectThrottled(await bearer(one, RIGHT));
  });
});

describe('with Redis away', () => {
  let alone: ServiceProcess;
  beforeAll(async () => {
    alone = await startService({
      DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api',
      REDIS_URL: 'redis://127.0.0.1:1', CREDENTIAL_THROTTLE_WINDOW_MS: String(WINDOW_MS),
    });
  });
  afterAll(async () => {
    await alone?.stop();
  });

  it('each process counts on its own: still 429 after 5 wrong, the right bearer works otherwise', async () => {
    const c = client(alone.url, { from: loopbackAddress() });
    expect((await bearer(c, RIGHT)).status).toBe(200);
    for (let i = 0; i < 5; i++) expectProblem(await bearer(c, WRONG), 401, 'UNAUTHORIZED');
    expectThrottled(await bearer(c, RIGHT));
    await waitFor('the window to end', async () => (await bearer(c, RIGHT)).status === 200, WINDOW_MS + 3000, 250);
  });
});
