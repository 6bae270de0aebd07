import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { Answer } from './support/http.js';
import { reserve, uniqueSku } from './support/orders.js';
import { expectValidation, fingerprint } from './support/problem.js';

/**
 * The input rules hold on every route, also on those that take no body: a body that is not absent
 * or `{}` is 400 VALIDATION_FAILED and the route does nothing. The routes come from openapi.json,
 * so a new route that changes something without a body schema fails here. ROLE=api: no worker
 * sends a delivery or retries an order behind the test's back, so "unchanged" is exact.
 */
const h = useHarness({ ROLE: 'api' });

type Operation = { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } };
const spec = JSON.parse(readFileSync('openapi.json', 'utf8')) as { paths: Record<string, Record<string, Operation>> };
const changing = Object.entries(spec.paths).flatMap(([path, item]) =>
  ['post', 'put', 'delete', 'patch'].filter((m) => item[m]).map((m) => ({ route: `${m.toUpperCase()} ${path}`, op: item[m] })),
);
const takesNoBody = (op: Operation) => {
  const schema = op.requestBody?.content['application/json']?.schema;
  return schema?.type === 'object' && Object.keys((schema.properties as object) ?? {}).length === 0 && schema.additionalProperties === false;
};

const BAD_BODIES = ['[1,2]', '"x"', '{"foo":1}', '{"__proto__":{}}'];

/** What each route that takes no body needs to act: a fresh target per call, and a way to send to it. */
interface Target {
  /** Sends `raw` (undefined: no body at all) to a target made by `make`. */
  send(target: string, raw: string | undefined): Promise<Answer>;
  /** A fresh target the route would act on (an order, a webhook, a session…), named as `send` takes it. */
  make(): Promise<string>;
  /** The status the route answers when it acts. */
  ok: number;
  /** What the database fingerprint does not cover, as it stands. */
  state?(target: string): Promise<unknown>;
}

const admin = (method: string) => (path: string, raw: string | undefined) => h.api.send(method, path, { raw, admin: true });

async function pendingOrder(): Promise<string> {
  const order = await reserve(h.api, uniqueSku('NB-P'), 1);
  await h.sim.script(['error']);
  const res = await h.api.post(`/orders/${order.id}/confirm`, { paymentToken: 'tok_ok' });
  expect([res.status, res.body.status]).toEqual([202, 'CONFIRM_PENDING']);
  return order.id;
}

async function webhook(): Promise<string> {
  const name = `nb-${randomUUID().slice(0, 8)}`;
  const put = await h.api.admin('PUT', `/admin/webhooks/${name}`, { url: 'https://example.invalid/hooks', events: ['order.reserved'], secret: `whsec_${randomBytes(24).toString('base64')}` });
  expect(put.status).toBe(200);
  return name;
}

async function signIn(): Promise<string> {
  const res = await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } });
  expect(res.status).toBe(200);
  return JSON.stringify({ cookie: (res.headers.get('set-cookie') ?? '').split(';')[0], csrf: res.body.csrfToken });
}

const TARGETS: Record<string, Target> = {
  'POST /orders/{id}/cancel': {
    make: async () => (await reserve(h.api, uniqueSku('NB-C'), 1)).id,
    send: (id, raw) => h.api.send('POST', `/orders/${id}/cancel`, { raw }),
    ok: 200,
  },
  'POST /admin/orders/{id}/retry-now': {
    make: pendingOrder,
    send: (id, raw) => admin('POST')(`/admin/orders/${id}/retry-now`, raw),
    ok: 200,
  },
  'DELETE /admin/webhooks/{name}': {
    make: webhook,
    send: (name, raw) => admin('DELETE')(`/admin/webhooks/${name}`, raw),
    ok: 204,
  },
  'POST /admin/webhooks/{name}/deliveries/{id}/retry': {
    make: async () => {
      const name = await webhook();
      await reserve(h.api, uniqueSku('NB-W'), 1); // order.reserved: one delivery, pending (no worker sends it)
      const list = await h.api.get(`/admin/webhooks/${name}/deliveries`, true);
      expect(list.body.data).toHaveLength(1);
      return `${name}/deliveries/${list.body.data[0].id}`;
    },
    send: (path, raw) => admin('POST')(`/admin/webhooks/${path}/retry`, raw),
    ok: 202,
    state: (path) => h.db.query('SELECT status, attempts, next_attempt_at, updated_at FROM webhook_deliveries WHERE id = $1', [path.split('/').pop()]),
  },
  'POST /admin/webhooks/{name}/deliveries/retry-failed': {
    make: async () => {
      const name = await webhook();
      await reserve(h.api, uniqueSku('NB-F'), 1); // one delivery, marked failed here (no worker sends it)
      await h.db.query(`UPDATE webhook_deliveries SET status = 'failed' WHERE webhook_name = $1`, [name]);
      return name;
    },
    send: (name, raw) => admin('POST')(`/admin/webhooks/${name}/deliveries/retry-failed`, raw),
    ok: 202,
    state: (name) => h.db.query('SELECT status, attempts, next_attempt_at, updated_at FROM webhook_deliveries WHERE webhook_name = $1', [name]),
  },
  'DELETE /admin/api-keys/{id}': {
    make: async () => {
      const res = await h.api.admin('POST', '/admin/api-keys', { name: 'nb', scopes: ['orders:read'] });
      expect(res.status).toBe(201);
      return res.body.id as string;
    },
    send: (id, raw) => admin('DELETE')(`/admin/api-keys/${id}`, raw),
    ok: 200,
    state: (id) => h.db.query('SELECT revoked_at FROM api_keys WHERE id = $1', [id]),
  },
  'DELETE /console/session': {
    make: signIn,
    send: (session, raw) => {
      const { cookie, csrf } = JSON.parse(session) as { cookie: string; csrf: string };
      return h.api.send('DELETE', '/console/session', { raw, headers: { cookie, 'x-csrf-token': csrf } });
    },
    ok: 204,
    state: async (session) => (await h.api.send('GET', '/console/session', { headers: { cookie: (JSON.parse(session) as { cookie: string }).cookie } })).status,
  },
};

it('every route that changes something documents its body; the ones that take none are exactly those tested here', () => {
  for (const { route, op } of changing) expect([route, op.requestBody !== undefined]).toEqual([route, true]);
  expect(changing.filter(({ op }) => takesNoBody(op)).map(({ route }) => route).sort()).toEqual(Object.keys(TARGETS).sort());
});

describe.each(Object.entries(TARGETS))('%s', (_route, target) => {
  it.each(BAD_BODIES)('refuses %s with 400 VALIDATION_FAILED and changes nothing', async (raw) => {
    const made = await target.make();
    const before = { db: await fingerprint(h.db), state: await target.state?.(made) };
    expectValidation(await target.send(made, raw));
    expect({ db: await fingerprint(h.db), state: await target.state?.(made) }).toEqual(before);
  });

  it('acts with no body, and with {}', async () => {
    for (const raw of [undefined, '{}']) {
      const made = await target.make();
      const before = { db: await fingerprint(h.db), state: await target.state?.(made) };
      const res = await target.send(made, raw);
      expect([raw, res.status]).toEqual([raw, target.ok]);
      expect({ db: await fingerprint(h.db), state: await target.state?.(made) }).not.toEqual(before);
    }
  });
});

it('DELETE /console/session authorizes in its handler, and 401 and 403 still come before the body check', async () => {
  const { cookie } = JSON.parse(await signIn()) as { cookie: string };
  const res = (headers: Record<string, string>) => h.api.send('DELETE', '/console/session', { raw: '[1,2]', headers });
  expect([(await res({})).status, (await res({ cookie })).status, (await res({ cookie, 'x-csrf-token': 'not-the-token' })).status]).toEqual([401, 403, 403]);
});
