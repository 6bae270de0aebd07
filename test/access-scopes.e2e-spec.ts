import { randomUUID } from 'node:crypto';
import { ACCESS_SQL } from '../src/access/access.sql.js';
import { call, makeKey, MadeKey } from './support/access.js';
import { useHarness } from './support/harness.js';
import { fetchFromAddress } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { expectProblem, fingerprint } from './support/problem.js';
import { rawRequest } from './support/raw-http.js';

/**
 * Scopes (API.md, "Identity and access"): a key opens the routes of its scopes and no other — 403
 * FORBIDDEN naming the scope it lacks — whatever way the path is spelled; `admin` opens every route;
 * a revoked, expired or made-up key is 401 and counts as a wrong credential.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000', CREDENTIAL_THROTTLE_WINDOW_MS: '60000' });
const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

interface Probe {
  method: string;
  path: string;
  body?: unknown;
}

let sku: string;
let orderId: string;
/** For each scope: routes it opens (safe to call, each changing at most this file's own rows). */
let own: Record<string, Probe[]>;
const keys: Record<string, MadeKey> = {};

beforeAll(async () => {
  sku = uniqueSku('SCOPE');
  expect((await h.api.putSku(sku, 100, 1000)).status).toBe(200);
  const order = await h.api.order(randomUUID(), { customerId: 'c-scope', items: [{ sku, quantity: 1 }] });
  expect(order.status).toBe(201);
  orderId = order.body.id;
  expect((await h.api.admin('PUT', '/admin/webhooks/kept', { url: 'http://127.0.0.1:9/hook', events: ['order.reserved'], secret: SECRET })).status).toBe(200);
  own = {
    'orders:read': [
      { method: 'GET', path: '/admin/orders' },
      { method: 'GET', path: `/admin/orders/${orderId}` },
      { method: 'GET', path: `/admin/orders/${orderId}/events` },
      { method: 'GET', path: '/admin/orders/counts' },
      { method: 'GET', path: '/admin/reconciliation' },
      { method: 'GET', path: '/admin/participant/transactions' },
      { method: 'GET', path: '/admin/stats' },
    ],
    'orders:write': [
      { method: 'POST', path: `/admin/orders/${orderId}/retry-now` },
      { method: 'POST', path: `/admin/orders/${orderId}/acknowledge`, body: { reason: 'looked' } },
      { method: 'POST', path: '/admin/orders/bulk-cancel', body: { filter: { customerId: 'nobody' }, reason: 'x', dryRun: true } },
    ],
    'inventory:read': [
      { method: 'GET', path: '/admin/inventory' },
      { method: 'GET', path: `/admin/inventory/${sku}/movements` },
      { method: 'GET', path: '/admin/inventory/consistency' },
      { method: 'GET', path: '/admin/locations' },
      { method: 'GET', path: '/admin/locations/default/usage' },
    ],
    'inventory:write': [
      { method: 'PUT', path: `/admin/inventory/${sku}`, body: { name: sku, priceMinor: 1000, currency: 'USD', onHand: 100 } },
      { method: 'POST', path: `/admin/inventory/${sku}/adjustments`, body: { delta: 1, reason: 'received' } },
      { method: 'PUT', path: '/admin/locations/scope-store', body: { name: 'Store', priority: 5, active: true } },
    ],
    webhooks: [
      { method: 'GET', path: '/admin/webhooks' },
      { method: 'GET', path: '/admin/webhooks/kept/deliveries' },
    ],
    participant: [{ method: 'POST', path: '/tcc/inventory/cancel', body: { transactionId: `scope-${randomUUID()}` } }],
    admin: [
      { method: 'GET', path: '/admin/api-keys' },
      { method: 'GET', path: '/admin/operators' },
      { method: 'GET', path: '/admin/audit' },
      { method: 'GET', path: '/admin/queues/api/queues' },
    ],
  };
  for (const scope of Object.keys(own)) keys[scope] = await makeKey(h.svc.url, [scope], `scope ${scope}`);
});

describe('a key of each scope', () => {
  it('opens the routes of its scope', async () => {
    const refused: string[] = [];
    for (const [scope, probes] of Object.entries(own)) {
      for (const p of probes) {
        const res = await call(h.svc.url, p.method, p.path, { bearer: keys[scope].key, body: p.body });
        if (res.status === 401 || res.status === 403 || res.status >= 500) refused.push(`${scope}: ${p.method} ${p.path} -> ${res.status}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it('is refused 403 with requiredScope on every route of another scope, and changes nothing', async () => {
    const before = await fingerprint(h.db);
    const wrong: string[] = [];
    for (const [scope, key] of Object.entries(keys)) {
      if (scope === 'admin') continue;
      for (const [other, probes] of Object.entries(own)) {
        if (other === scope) continue;
        for (const p of probes) {
          const res = await call(h.svc.url, p.method, p.path, { bearer: key.key, body: p.body });
          if (res.status !== 403 || res.body?.code !== 'FORBIDDEN' || res.body?.requiredScope !== other) wrong.push(`${scope} on ${p.method} ${p.path}: ${res.status} ${res.body?.requiredScope}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await fingerprint(h.db)).toEqual(before);
  });

  it('admin opens every route of every scope', async () => {
    for (const probes of Object.values(own)) {
      for (const p of probes.filter((q) => q.method === 'GET')) {
        const res = await call(h.svc.url, p.method, p.path, { bearer: keys.admin.key });
        expect({ path: p.path, status: res.status }).toEqual({ path: p.path, status: 200 });
      }
    }
  });

  it('a key with several scopes holds each of them', async () => {
    const both = await makeKey(h.svc.url, ['orders:read', 'inventory:read']);
    expect((await call(h.svc.url, 'GET', '/admin/orders', { bearer: both.key })).status).toBe(200);
    expect((await call(h.svc.url, 'GET', '/admin/inventory', { bearer: both.key })).status).toBe(200);
    const res = await call(h.svc.url, 'PUT', `/admin/inventory/${sku}`, { bearer: both.key, body: { priceMinor: 1, currency: 'USD', onHand: 1 } });
    expectProblem(res as never, 403, 'FORBIDDEN');
    expect(res.body.requiredScope).toBe('inventory:write');
  });
});

describe('the scope is decided on the route that serves the request', () => {
  /** Spellings the router decodes or normalises to the route (route-authorization.e2e-spec.ts shows which it serves). */
  function spellings(path: string): string[] {
    const [, first, ...rest] = path.split('/');
    const tail = `/${rest.join('/')}`;
    return [
      path,
      `/%${first.charCodeAt(0).toString(16)}${first.slice(1)}${tail}`,
      `/${[...first].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('')}${tail}`,
      `http://x${path}`,
      `HTTP://127.0.0.1${path}`,
      `//${first}${tail}`,
      `/${first}//${tail.slice(1)}`,
      `/./${first}${tail}`,
      `/x/..${path}`,
      `/${first.toUpperCase()}${tail}`,
      `${path}/`,
      `${path}?x=1`,
      `/${first}%2f${tail.slice(1)}`,
    ];
  }

  function raw(method: string, target: string, key: string, body?: unknown, extra: string[] = []) {
    const text = body === undefined ? '' : JSON.stringify(body);
    const head = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', `Authorization: Bearer ${key}`, ...extra];
    if (text) head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(text)}`);
    return rawRequest(h.svc.url, `${head.join('\r\n')}\r\n\r\n${text}`, { closeWaitMs: 0 });
  }

  it('a key of the wrong scope reaches no handler under any spelling, method or override', async () => {
    const before = await fingerprint(h.db);
    const reader = keys['orders:read'].key;
    const targets: Probe[] = [
      { method: 'PUT', path: `/admin/inventory/${sku}`, body: { name: 'x', priceMinor: 1, currency: 'USD', onHand: 999 } },
      { method: 'POST', path: `/admin/inventory/${sku}/adjustments`, body: { delta: 50, reason: 'received' } },
      { method: 'POST', path: `/admin/orders/${orderId}/force-cancel`, body: { reason: 'x' } },
      { method: 'POST', path: '/admin/api-keys', body: { name: 'stolen', scopes: ['admin'] } },
      { method: 'POST', path: '/admin/operators', body: { email: 'evil@example.test', name: 'Evil', role: 'admin', password: 'a-long-password-1' } },
      { method: 'DELETE', path: '/admin/webhooks/kept' },
      { method: 'PUT', path: '/admin/queues/api/queues/pause' },
      { method: 'POST', path: '/tcc/inventory/try', body: { transactionId: 'stolen', items: [{ sku, quantity: 5 }] } },
    ];
    const granted: string[] = [];
    let refused = 0;
    for (const t of targets) {
      for (const target of spellings(t.path)) {
        const res = await raw(t.method, target, reader, t.body);
        if (res.status < 300 || res.status === 401 || res.status >= 500) granted.push(`${t.method} ${target} -> ${res.status}`);
        if (res.status === 403) refused += 1;
      }
      // A method override header or a HEAD/OPTIONS never turns a read key into a writer.
      for (const extra of [['X-HTTP-Method-Override: GET'], ['X-HTTP-Method: GET'], ['X-Method-Override: GET']]) {
        const res = await raw(t.method, t.path, reader, t.body, extra);
        if (res.status < 300 || res.status >= 500) granted.push(`${t.method} ${t.path} ${extra[0]} -> ${res.status}`);
      }
      for (const method of ['HEAD', 'OPTIONS']) {
        const res = await call(h.svc.url, method, t.path, { bearer: keys.participant.key });
        if (res.status < 300 || res.status >= 500) granted.push(`${method} ${t.path} -> ${res.status}`);
      }
    }
    expect(granted).toEqual([]);
    expect(refused).toBeGreaterThan(targets.length * 4);
    expect(await fingerprint(h.db)).toEqual(before);
    const keysNow = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE name = 'stolen'`);
    expect(keysNow[0].n).toBe(0);
    expect((await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM operators WHERE email = 'evil@example.test'`))[0].n).toBe(0);
  });

  it('HEAD of a read route is judged as its GET', async () => {
    expect((await call(h.svc.url, 'HEAD', '/admin/api-keys', { bearer: keys['orders:read'].key })).status).toBe(403);
    expect((await call(h.svc.url, 'HEAD', '/admin/orders', { bearer: keys['orders:read'].key })).status).toBe(200);
  });
});

describe('keys that open nothing', () => {
  it('revoked: 401 at once on this process, and revoking again answers the same', async () => {
    const key = await makeKey(h.svc.url, ['orders:read']);
    expect((await call(h.svc.url, 'GET', '/admin/orders', { bearer: key.key })).status).toBe(200);
    const revoked = await call(h.svc.url, 'DELETE', `/admin/api-keys/${key.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect(revoked.body.key).toBeUndefined();
    const again = await call(h.svc.url, 'DELETE', `/admin/api-keys/${key.id}`);
    expect(again.body).toEqual(revoked.body);
    // The use above is recorded without being waited for: its write may land after the
    // revocation (it once did, and revoking again answered a new lastUsedAt). Such a write, made
    // here on purpose, changes nothing.
    await h.db.query(ACCESS_SQL.touchKey.text, [key.id, new Date(Date.parse(revoked.body.revokedAt as string) - 5)]);
    expect((await call(h.svc.url, 'DELETE', `/admin/api-keys/${key.id}`)).body).toEqual(revoked.body);
    const res = await call(h.svc.url, 'GET', '/admin/orders', { bearer: key.key });
    expectProblem(res as never, 401, 'UNAUTHORIZED');
  });

  it('expired: 401 once its expiresAt has passed', async () => {
    const made = await call(h.svc.url, 'POST', '/admin/api-keys', { body: { name: 'short', scopes: ['orders:read'], expiresAt: new Date(Date.now() + 1500).toISOString() } });
    expect(made.status).toBe(201);
    expect((await call(h.svc.url, 'GET', '/admin/orders', { bearer: made.body.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1700));
    expectProblem((await call(h.svc.url, 'GET', '/admin/orders', { bearer: made.body.key })) as never, 401, 'UNAUTHORIZED');
  });

  it('a key of the right form that was never issued is 401, and wrong keys are throttled per address', async () => {
    const address = '127.9.8.7';
    const fake = `tcc_${'A'.repeat(43)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fetchFromAddress(`${h.svc.url}/admin/orders`, { method: 'GET', headers: { authorization: `Bearer ${fake}` } }, address);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const right = await fetchFromAddress(`${h.svc.url}/admin/orders`, { method: 'GET', headers: { authorization: `Bearer ${keys['orders:read'].key}` } }, address);
    expect(right.status).toBe(429);
  });

  it('a creation is validated: scopes known and distinct, a name, a future expiry', async () => {
    for (const body of [
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['orders:read', 'orders:read'] },
      { name: 'x', scopes: ['root'] },
      { name: '', scopes: ['admin'] },
      { name: 'x', scopes: ['admin'], expiresAt: new Date(Date.now() - 1000).toISOString() },
      { name: 'x', scopes: ['admin'], expiresAt: 'tomorrow' },
      // Times the pattern lets through but Postgres refuses (they were a 500): no 30 February, no offset past ±15:59.
      { name: 'x', scopes: ['admin'], expiresAt: '2030-02-30T00:00Z' },
      { name: 'x', scopes: ['admin'], expiresAt: '2030-01-01T00:00+16:00' },
      { name: 'x', scopes: ['admin'], expiresAt: '2030-01-01T23:59:60Z' },
      { name: 'x', scopes: ['admin'], extra: 1 },
    ]) {
      expectProblem((await call(h.svc.url, 'POST', '/admin/api-keys', { body })) as never, 400, 'VALIDATION_FAILED');
    }
    // A real moment at the edges is taken.
    expect((await call(h.svc.url, 'POST', '/admin/api-keys', { body: { name: 'edge', scopes: ['admin'], expiresAt: '2032-02-29T12:00+15:59' } })).status).toBe(201);
  });

  it('the key is shown once: its list and its page never carry it', async () => {
    const key = await makeKey(h.svc.url, ['webhooks'], 'shown once');
    expect(key.key).toMatch(/^tcc_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(key.key.slice(0, 12));
    const one = await call(h.svc.url, 'GET', `/admin/api-keys/${key.id}`);
    expect(one.body).toEqual({ id: key.id, name: 'shown once', scopes: ['webhooks'], prefix: key.prefix, createdAt: expect.any(String), expiresAt: null, lastUsedAt: null, revokedAt: null });
    const list = await call(h.svc.url, 'GET', '/admin/api-keys?limit=2');
    expect(list.body.nextCursor).toEqual(expect.any(String));
    const all: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call(h.svc.url, 'GET', `/admin/api-keys?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      all.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(all.map((k) => k.id)).toContain(key.id);
    expect(JSON.stringify(all)).not.toContain(key.key);
    expect(all.every((k) => !('key' in k))).toBe(true);
    expectProblem((await call(h.svc.url, 'GET', '/admin/api-keys?cursor=forged.cursor')) as never, 400, 'VALIDATION_FAILED');
    expectProblem((await call(h.svc.url, 'GET', '/admin/api-keys/not-a-uuid')) as never, 404, 'NOT_FOUND');
  });

  it('lastUsedAt follows a use', async () => {
    const key = await makeKey(h.svc.url, ['orders:read']);
    await call(h.svc.url, 'GET', '/admin/orders', { bearer: key.key });
    const seen = await (async () => {
      for (let i = 0; i < 50; i++) {
        const res = await call(h.svc.url, 'GET', `/admin/api-keys/${key.id}`);
        if (res.body.lastUsedAt) return res.body.lastUsedAt;
        await new Promise((r) => setTimeout(r, 100));
      }
      return null;
    })();
    expect(seen).toEqual(expect.any(String));
  });
});
