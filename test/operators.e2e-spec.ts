import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { call, makeOperator, signInOperator, withSession } from './support/access.js';
import { useHarness } from './support/harness.js';
import { fetchFromAddress, waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { expectProblem } from './support/problem.js';
import { FAST_ENV } from './support/service.js';

/**
 * Operators (API.md, "Operators"): made, listed, changed and disabled by an admin; an email is one
 * operator's whatever its case, also when two creations race; a password is 12-200 characters and
 * never comes back; each role opens its scopes, with its own console session.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });

const email = () => `Op.${randomBytes(4).toString('hex')}@Example.test`;

describe('operators', () => {
  it('are made, listed, read and changed; the password never comes back', async () => {
    const made = await call(h.svc.url, 'POST', '/admin/operators', { body: { email: 'ana@example.test', name: 'Ana', role: 'viewer', password: 'correct horse battery' } });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ id: expect.any(String), email: 'ana@example.test', name: 'Ana', role: 'viewer', createdAt: expect.any(String), disabledAt: null, lastSignInAt: null });
    const one = await call(h.svc.url, 'GET', `/admin/operators/${made.body.id}`);
    expect(one.body).toEqual(made.body);
    const changed = await call(h.svc.url, 'PATCH', `/admin/operators/${made.body.id}`, { body: { name: 'Ana B', role: 'stock' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ name: 'Ana B', role: 'stock', disabledAt: null });
    const list = await call(h.svc.url, 'GET', '/admin/operators?limit=1000');
    expect(list.body.data.map((o: { id: string }) => o.id)).toContain(made.body.id);
    expect(JSON.stringify(list.body)).not.toMatch(/password|scrypt/i);
    const rows = await h.db.query<{ password_hash: string }>('SELECT password_hash FROM operators WHERE id = $1', [made.body.id]);
    // At the cost the service runs with (PASSWORD_HASH_COST; the contract's 2^17 is passwords.spec.ts's).
    const n = 2 ** Number(FAST_ENV.PASSWORD_HASH_COST);
    expect(rows[0].password_hash).toMatch(new RegExp(`^scrypt\\$${n}\\$8\\$1\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$`));
    expect(rows[0].password_hash).not.toContain('correct horse');
  });

  it('an email taken in any case is OPERATOR_EXISTS', async () => {
    const e = email();
    expect((await call(h.svc.url, 'POST', '/admin/operators', { body: { email: e, name: 'A', role: 'viewer', password: 'a-long-password-1' } })).status).toBe(201);
    const again = await call(h.svc.url, 'POST', '/admin/operators', { body: { email: e.toUpperCase(), name: 'B', role: 'admin', password: 'a-long-password-2' } });
    expectProblem(again as never, 409, 'OPERATOR_EXISTS');
  });

  it('two creations of one email at the same moment: one 201, one 409, never a 500', async () => {
    for (let round = 0; round < 3; round++) {
      const e = email();
      const answers = await Promise.all(
        [e.toLowerCase(), e.toUpperCase()].map((address, i) => call(h.svc.url, 'POST', '/admin/operators', { body: { email: address, name: `Racer ${i}`, role: 'viewer', password: 'a-long-password-1' } })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    }
  });

  it('password rules: 12-200 characters; unknown roles and fields refused', async () => {
    for (const body of [
      { email: email(), name: 'A', role: 'viewer', password: 'short-11chr' },
      { email: email(), name: 'A', role: 'viewer', password: 'x'.repeat(201) },
      { email: email(), name: 'A', role: 'root', password: 'a-long-password-1' },
      { email: 'not an email', name: 'A', role: 'viewer', password: 'a-long-password-1' },
      { email: email(), name: 'A\u202Eevil', role: 'viewer', password: 'a-long-password-1' },
      { email: email(), name: 'A', role: 'viewer', password: 'a-long-password-1', admin: true },
    ]) {
      expectProblem((await call(h.svc.url, 'POST', '/admin/operators', { body })) as never, 400, 'VALIDATION_FAILED');
    }
    const op = await makeOperator(h.svc.url, 'viewer');
    expectProblem((await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { password: 'too-short' } })) as never, 400, 'VALIDATION_FAILED');
    expectProblem((await call(h.svc.url, 'PATCH', `/admin/operators/${randomUUID()}`, { body: { name: 'x' } })) as never, 404, 'NOT_FOUND');
    expectProblem((await call(h.svc.url, 'PATCH', '/admin/operators/nope', { body: { name: 'x' } })) as never, 404, 'NOT_FOUND');
  });

  it('a viewer reads but changes nothing through the API; an operator changes orders, not stock; stock changes stock', async () => {
    const sku = uniqueSku('ROLE');
    expect((await h.api.putSku(sku, 20)).status).toBe(200);
    const order = await h.api.order(randomUUID(), { customerId: 'c-role', items: [{ sku, quantity: 1 }] });
    const viewer = await signInOperator(h.svc.url, ...(await creds('viewer')));
    expect(viewer.body).toMatchObject({ role: 'viewer', operator: 'Op viewer', principal: { type: 'operator', name: 'Op viewer' } });
    expect((await withSession(h.svc.url, viewer, 'GET', '/admin/orders')).status).toBe(200);
    expect((await withSession(h.svc.url, viewer, 'GET', '/admin/inventory')).status).toBe(200);
    for (const [method, path, body, scope] of [
      ['POST', `/admin/orders/${order.body.id}/force-cancel`, { reason: 'x' }, 'orders:write'],
      ['PUT', `/admin/inventory/${sku}`, { priceMinor: 1, currency: 'USD', onHand: 1 }, 'inventory:write'],
      ['POST', `/admin/inventory/${sku}/adjustments`, { delta: 5, reason: 'received' }, 'inventory:write'],
      ['POST', '/admin/operators', { email: email(), name: 'X', role: 'admin', password: 'a-long-password-1' }, 'admin'],
      ['PATCH', `/admin/operators/${viewer.body.principal.id}`, { role: 'admin' }, 'admin'],
      ['POST', '/admin/api-keys', { name: 'x', scopes: ['admin'] }, 'admin'],
      ['PUT', '/admin/webhooks/x', { url: 'http://127.0.0.1:9/', events: ['order.reserved'], secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` }, 'webhooks'],
    ] as const) {
      const res = await withSession(h.svc.url, viewer, method, path, body);
      expect({ path, status: res.status, scope: res.body?.requiredScope }).toEqual({ path, status: 403, scope });
    }
    expect((await call(h.svc.url, 'GET', `/admin/orders/${order.body.id}`)).body.status).toBe('TRY_SUCCESS');

    const operator = await signInOperator(h.svc.url, ...(await creds('operator')));
    expect((await withSession(h.svc.url, operator, 'PUT', `/admin/inventory/${sku}`, { priceMinor: 1, currency: 'USD', onHand: 1 })).status).toBe(403);
    const canceled = await withSession(h.svc.url, operator, 'POST', `/admin/orders/${order.body.id}/force-cancel`, { reason: 'customer asked' });
    expect(canceled.status).toBe(200);
    const events = await call(h.svc.url, 'GET', `/admin/orders/${order.body.id}/events`);
    const forced = events.body.data.find((e: { type: string }) => e.type === 'operator.force_cancel');
    expect(forced.principal).toEqual({ type: 'operator', id: operator.body.principal.id, name: 'Op operator' });
    expect(forced.data.operator).toBe('Op operator');

    const stock = await signInOperator(h.svc.url, ...(await creds('stock')));
    const adjusted = await withSession(h.svc.url, stock, 'POST', `/admin/inventory/${sku}/adjustments`, { delta: 3, reason: 'received' });
    expect(adjusted.status).toBe(201);
    expect(adjusted.body.movement).toMatchObject({ actor: 'console', operator: 'Op stock', principal: { type: 'operator', id: stock.body.principal.id, name: 'Op stock' } });
    expect((await withSession(h.svc.url, stock, 'POST', `/admin/orders/${order.body.id}/acknowledge`, { reason: 'x' })).status).toBe(403);
  });

  it('root and API keys are named on the ledger too', async () => {
    const sku = uniqueSku('WHO');
    expect((await h.api.putSku(sku, 5)).status).toBe(200);
    const key = (await call(h.svc.url, 'POST', '/admin/api-keys', { body: { name: 'stock feed', scopes: ['inventory:write', 'inventory:read'] } })).body;
    expect((await call(h.svc.url, 'POST', `/admin/inventory/${sku}/adjustments`, { bearer: key.key, body: { delta: 2, reason: 'received' } })).status).toBe(201);
    const movements = await call(h.svc.url, 'GET', `/admin/inventory/${sku}/movements`, { bearer: key.key });
    expect(movements.body.data.map((m: any) => [m.actor, m.principal])).toEqual([
      ['admin', { type: 'api_key', id: key.id, name: 'stock feed' }],
      ['admin', { type: 'root', id: null, name: null }],
    ]);
  });

  it('a sign-in with a wrong password or an unknown email gets the same answer; a disabled operator cannot sign in', async () => {
    const op = await makeOperator(h.svc.url, 'viewer');
    const tries = [
      { email: op.email, password: 'wrong-password-1' },
      { email: `nobody-${randomBytes(3).toString('hex')}@example.test`, password: 'wrong-password-1' },
    ];
    const answers = [];
    for (const body of tries) {
      const res = await fetch(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      answers.push({ status: res.status, detail: ((await res.json()) as { detail: string }).detail });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0].status).toBe(401);
    expect((await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { disabled: true } })).body.disabledAt).toEqual(expect.any(String));
    await expect(signInOperator(h.svc.url, op.email, op.password)).rejects.toThrow(/401/);
    expect((await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { disabled: false } })).body.disabledAt).toBeNull();
    const back = await signInOperator(h.svc.url, op.email.toUpperCase(), op.password);
    expect(back.body.role).toBe('viewer');
    expect((await call(h.svc.url, 'GET', `/admin/operators/${op.id}`)).body.lastSignInAt).toEqual(expect.any(String));
  });

  it('a sign-in whose password check overlaps a password or role change: no session outlives a new password; a role change signs in with the new role', async () => {
    // The operator's row held by a transaction of the test's own, so the two requests meet it in a
    // chosen order: the sign-in has already read the old hash and checked the old password.
    const waiting = async (n: number) =>
      waitFor(`${n} statements waiting for the operator's row`, async () => {
        const rows = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`);
        return rows[0].n >= n;
      });
    // What each ordering must come to: the sign-in's answer, then its session's (GET with its cookie), and the sessions left.
    const cases = [
      // The new password is in first: the old one is wrong now, judged again against the operator as it is.
      { first: 'change', body: { password: 'the-new-password-1' }, signIn: 401, session: 401, left: 0 },
      // The sign-in's session opens first, and the change ends it.
      { first: 'sign-in', body: { password: 'the-new-password-1' }, signIn: 200, session: 401, left: 0 },
      // The password is still right: judged again, the sign-in opens a session with the role as it is now.
      { first: 'change', body: { role: 'operator' }, signIn: 200, session: 200, left: 1 },
    ] as const;
    for (const [i, { first, body, ...expected }] of cases.entries()) {
      const op = await makeOperator(h.svc.url, 'viewer');
      const nextPassword = 'password' in body ? body.password : op.password;
      const holder = new pg.Client({ connectionString: h.db.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM operators WHERE id = $1 FOR UPDATE', [op.id]);
        const change = () => call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body });
        // From an address of its own: the refused sign-in and the ended session's cookie count as wrong credentials there.
        const address = `127.79.${i + 1}.${1 + Math.floor(Math.random() * 250)}`;
        const signInWith = (password: string) =>
          fetchFromAddress(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: op.email, password }) }, address);
        const signIn = () => signInWith(op.password);
        let changed: Promise<{ status: number }>;
        let signedIn: Promise<Response>;
        if (first === 'change') {
          changed = change();
          await waiting(1);
          signedIn = signIn();
          await waiting(2);
        } else {
          signedIn = signIn();
          await waiting(1);
          changed = change();
          await waiting(2);
        }
        await holder.query('COMMIT');
        expect((await changed).status).toBe(200);
        const res = await signedIn;
        const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
        const live = res.status === 200 ? await fetchFromAddress(`${h.svc.url}/console/session`, { method: 'GET', headers: { cookie } }, address) : undefined;
        expect({ first, body, signIn: res.status, session: live?.status ?? res.status }).toEqual({ first, body, signIn: expected.signIn, session: expected.session });
        // A live session holds the operator's role as it is now.
        if (live?.status === 200) expect(((await live.json()) as { role: string }).role).toBe('role' in body ? body.role : 'viewer');
        const sessions = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM console_sessions WHERE operator_id = $1', [op.id]);
        expect(sessions).toEqual([{ n: expected.left }]);
        expect((await signInWith(nextPassword)).status).toBe(200);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.end();
      }
    }
  });

  it('10 wrong passwords for one account within the window refuse its sign-in, from any address, the right one too', async () => {
    const op = await makeOperator(h.svc.url, 'viewer');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      // Two tries per address: the per-address throttle (5) never stands in the way.
      const address = `127.77.${i >> 1}.${(i & 1) + 1}`;
      const res = await fetchFromAddress(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: op.email, password: `wrong-${i}-password` }) }, address);
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(60);
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    const right = await fetchFromAddress(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: op.email, password: op.password }) }, '127.78.0.1');
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeLessThanOrEqual(900);
  });

  async function creds(role: string): Promise<[string, string]> {
    const op = await makeOperator(h.svc.url, role);
    return [op.email, op.password];
  }
});
