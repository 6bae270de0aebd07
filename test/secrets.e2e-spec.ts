import { randomUUID } from 'node:crypto';
import { call, makeKey, makeOperator, signInOperator, withSession } from './support/access.js';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { uniqueSku } from './support/orders.js';

/**
 * Nothing secret is kept or shown (API.md, "Audit"): after keys, passwords, the admin token and
 * session cookies have all been used — and failed sign-ins tried — no table of the database, no
 * log line of the service and no answer it gave (but the key's own creation) holds any of them.
 */
const h = useHarness({ LOG_REQUESTS: 'all' });

it('no key, password, token or session id is found in the database, the logs or the answers', async () => {
  const answers: string[] = [];
  const keep = <T extends { body: unknown }>(res: T): T => {
    answers.push(JSON.stringify(res.body));
    return res;
  };
  const key = await makeKey(h.svc.url, ['inventory:write', 'inventory:read']);
  const op = await makeOperator(h.svc.url, 'operator');
  const session = await signInOperator(h.svc.url, op.email, op.password);
  answers.push(JSON.stringify(session.body));
  const sessionId = session.cookie.split('=')[1];
  const sku = uniqueSku('SEC');
  keep(await call(h.svc.url, 'PUT', `/admin/inventory/${sku}`, { bearer: key.key, body: { priceMinor: 100, currency: 'USD', onHand: 5 } }));
  keep(await call(h.svc.url, 'GET', `/admin/inventory/${sku}/movements`, { bearer: key.key }));
  keep(await call(h.svc.url, 'GET', '/admin/api-keys'));
  keep(await call(h.svc.url, 'GET', `/admin/api-keys/${key.id}`));
  keep(await call(h.svc.url, 'DELETE', `/admin/api-keys/${key.id}`));
  keep(await call(h.svc.url, 'GET', '/admin/operators'));
  const newPassword = `changed-${randomUUID()}`;
  keep(await call(h.svc.url, 'PATCH', `/admin/operators/${op.id}`, { body: { password: newPassword } }));
  const order = await h.api.order(randomUUID(), { customerId: 'c-sec', items: [{ sku, quantity: 1 }] });
  const again = await signInOperator(h.svc.url, op.email, newPassword);
  answers.push(JSON.stringify(again.body));
  keep(await withSession(h.svc.url, again, 'POST', `/admin/orders/${order.body.id}/force-cancel`, { reason: 'secrets' }));
  keep(await call(h.svc.url, 'GET', `/admin/orders/${order.body.id}/events`));
  // Wrong ones too: a guessed password, a revoked key, the token mistyped.
  for (const body of [{ email: op.email, password: 'a-guessed-password-7' }, { token: `${ADMIN_TOKEN}x`, name: 'Guess' }]) {
    const res = await fetch(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    answers.push(await res.text());
  }
  keep(await call(h.svc.url, 'GET', '/admin/orders', { bearer: key.key }));
  const rootSignIn = await fetch(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: ADMIN_TOKEN, name: 'Root' }) });
  answers.push(await rootSignIn.text());
  const rootSession = (rootSignIn.headers.get('set-cookie') ?? '').split(';')[0].split('=')[1];
  await new Promise((r) => setTimeout(r, 500)); // the audit is written after each answer
  keep(await call(h.svc.url, 'GET', '/admin/audit?limit=1000'));

  const secrets = { apiKey: key.key, password: op.password, newPassword, guessed: 'a-guessed-password-7', adminToken: ADMIN_TOKEN, sessionId, secondSession: again.cookie.split('=')[1], rootSession };
  // Every column of every table, as text.
  const tables = await h.db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
  const dump: string[] = [];
  for (const { table_name } of tables) {
    const rows = await h.db.query<{ t: string }>(`SELECT t::text AS t FROM "${table_name}" t`);
    dump.push(...rows.map((r) => r.t));
  }
  const text = dump.join('\n');
  const logs = h.svc.logs.join('\n');
  // The key's own creation answer is the one place it may be.
  const shown = answers.join('\n');
  const found: string[] = [];
  for (const [name, secret] of Object.entries(secrets)) {
    if (!secret) throw new Error(`${name} missing`);
    if (text.includes(secret)) found.push(`${name} in the database`);
    if (logs.includes(secret)) found.push(`${name} in the logs`);
    if (shown.includes(secret)) found.push(`${name} in an answer`);
  }
  expect(found).toEqual([]);
  expect(dump.length).toBeGreaterThan(10);
  expect(logs.length).toBeGreaterThan(100);
});
