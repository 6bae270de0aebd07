import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { uniqueSku } from './support/orders.js';
import { fingerprint } from './support/problem.js';
import { RawAnswer, rawRequest } from './support/raw-http.js';

/**
 * Authorization is decided on the route that will serve a request, never on how its path is
 * spelled. Every protected route (the admin API, the queue dashboard's API, the TCC participant) is
 * sent without credentials under every spelling a router may decode or normalise to it: never a 2xx,
 * and the database and the queues exactly as they were. The same spellings with the token show
 * which of them the router does serve (so the test cannot pass by spellings that reach nothing).
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
let sku: string;
let held: { id: string };

interface Protected {
  method: string;
  /** Starts with the segment the spellings play with. */
  path: string;
  body?: unknown;
}

let routes: Protected[];

beforeAll(async () => {
  sku = uniqueSku('AUTH');
  expect((await h.api.putSku(sku, 50, 1000)).status).toBe(200);
  const order = await h.api.order(randomUUID(), { customerId: 'c-auth', items: [{ sku, quantity: 1 }] });
  expect(order.status).toBe(201);
  held = order.body;
  expect((await h.api.admin('PUT', '/admin/webhooks/kept', { url: 'http://127.0.0.1:9/hook', events: ['order.reserved'], secret: SECRET })).status).toBe(200);
  const id = held.id;
  routes = [
    { method: 'GET', path: '/admin/orders' },
    { method: 'GET', path: `/admin/orders/${id}` },
    { method: 'GET', path: `/admin/orders/${id}/events` },
    { method: 'GET', path: '/admin/orders/counts' },
    { method: 'GET', path: `/admin/orders/${id}/payment` },
    { method: 'POST', path: `/admin/orders/${id}/force-confirm`, body: { reason: 'free goods' } },
    { method: 'POST', path: `/admin/orders/${id}/force-cancel`, body: { reason: 'x' } },
    { method: 'POST', path: `/admin/orders/${id}/retry-now` },
    { method: 'POST', path: `/admin/orders/${id}/acknowledge`, body: { reason: 'x' } },
    { method: 'POST', path: '/admin/orders/bulk-cancel', body: { filter: {}, reason: 'x', dryRun: false } },
    { method: 'PUT', path: `/admin/inventory/${uniqueSku('NEW')}`, body: { name: 'n', priceMinor: 1, currency: 'USD', onHand: 5 } },
    { method: 'PUT', path: `/admin/inventory/${sku}`, body: { name: 'n', priceMinor: 1, currency: 'USD', onHand: 500 } },
    { method: 'PUT', path: `/admin/inventory/${sku}/locations/default`, body: { onHand: 900 } },
    { method: 'GET', path: '/admin/inventory' },
    { method: 'POST', path: '/admin/inventory/import', body: { items: [{ sku, onHand: 800 }] } },
    { method: 'GET', path: `/admin/inventory/${sku}/movements` },
    { method: 'POST', path: `/admin/inventory/${sku}/adjustments`, body: { delta: 100, reason: 'received' } },
    { method: 'GET', path: '/admin/inventory/consistency' },
    { method: 'POST', path: '/admin/inventory/consistency/repair', body: { reason: 'x' } },
    { method: 'GET', path: '/admin/locations' },
    { method: 'GET', path: '/admin/locations/default/usage' },
    { method: 'PUT', path: '/admin/locations/stolen', body: { name: 'x', priority: 0, active: true } },
    { method: 'GET', path: '/admin/participant/transactions' },
    { method: 'GET', path: '/admin/reconciliation' },
    { method: 'POST', path: '/admin/reconciliation', body: { sinceMinutes: 60 } },
    { method: 'GET', path: '/admin/stats' },
    { method: 'GET', path: '/admin/webhooks' },
    { method: 'PUT', path: '/admin/webhooks/evil', body: { url: 'http://169.254.169.254/steal', events: ['order.reserved'], secret: SECRET } },
    { method: 'DELETE', path: '/admin/webhooks/kept' },
    { method: 'GET', path: '/admin/webhooks/kept/deliveries' },
    { method: 'POST', path: '/admin/webhooks/kept/deliveries/retry-failed' },
    { method: 'GET', path: '/admin/queues' },
    { method: 'GET', path: '/admin/queues/api/queues' },
    { method: 'PUT', path: '/admin/queues/api/queues/pause' },
    { method: 'PUT', path: '/admin/queues/api/queues/webhooks/pause' },
    { method: 'POST', path: '/tcc/inventory/try', body: { transactionId: 'stolen-1', items: [{ sku, quantity: 5 }], timeoutMs: 3_600_000 } },
    { method: 'POST', path: '/tcc/inventory/confirm', body: { transactionId: 'stolen-1' } },
    { method: 'POST', path: '/tcc/inventory/cancel', body: { transactionId: 'stolen-2' } },
  ];
});

/** Every way to spell a path whose first segment is `first` (admin, tcc, console) that a router might serve. */
function spellings(path: string): string[] {
  const [, first, ...rest] = path.split('/');
  const tail = rest.length ? `/${rest.join('/')}` : '';
  const out = new Set<string>();
  for (let i = 0; i < first.length; i++) {
    const hex = first.charCodeAt(i).toString(16);
    for (const h of [hex.toLowerCase(), hex.toUpperCase()]) out.add(`/${first.slice(0, i)}%${h}${first.slice(i + 1)}${tail}`);
  }
  const all = [...first].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
  out.add(`/${all}${tail}`);
  out.add(`/${all.toUpperCase()}${tail}`);
  for (const host of ['http://x', 'http://127.0.0.1', 'https://evil.example', 'HTTP://X']) out.add(`${host}${path}`);
  out.add(`http://x/%${first.charCodeAt(0).toString(16)}${first.slice(1)}${tail}`);
  out.add(`/.${path}`);
  out.add(`/./.${path}`);
  out.add(`/x/..${path}`);
  out.add(`/%2e${path}`);
  out.add(`/x/%2e%2e${path}`);
  out.add(`/${first}/.${tail}`);
  out.add(`/${first}/x/..${tail}`);
  out.add(`/${path}`);
  out.add(`//${first}/${tail}`);
  out.add(`/${first}/${tail}`);
  out.add(`/${first};x${tail}`);
  out.add(`/${first};${tail}`);
  out.add(`${path};x=1`);
  out.add(`/${first}%2f${tail.slice(1)}`);
  out.add(`/${first}%2F${tail.slice(1)}`);
  out.add(`/%2f${first}${tail}`);
  out.add(`/${first.toUpperCase()}${tail}`);
  out.add(`/${first[0].toUpperCase()}${first.slice(1)}${tail}`);
  out.add(`/${first}%20${tail}`);
  out.add(`/${first}%09${tail}`);
  out.add(`/${first}${tail}/`);
  out.add(`/${first}${tail}?x=1`);
  out.add(`/${first}${tail}#frag`);
  out.add(`\\${first}${tail}`);
  out.add(`/${first}\\${tail.slice(1)}`);
  return [...out];
}

function send(r: Protected, target: string, token: boolean): Promise<RawAnswer> {
  const body = r.body === undefined ? '' : JSON.stringify(r.body);
  const headers = [
    `${r.method} ${target} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...(token ? [`Authorization: Bearer ${ADMIN_TOKEN}`] : []),
    ...(body ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`] : []),
  ];
  return rawRequest(h.svc.url, `${headers.join('\r\n')}\r\n\r\n${body}`, { closeWaitMs: 0 });
}

async function queuesPaused(): Promise<string[]> {
  const res = await h.api.get('/admin/queues/api/queues', true);
  expect(res.status).toBe(200);
  return (res.body.queues as { name: string; isPaused: boolean }[]).filter((q) => q.isPaused).map((q) => q.name);
}

describe('protected routes under every spelling, without credentials', () => {
  it('answer no 2xx and change nothing', async () => {
    const before = await fingerprint(h.db);
    expect(await queuesPaused()).toEqual([]);
    const granted: string[] = [];
    let tried = 0;
    for (const r of routes) {
      for (const target of [r.path, ...spellings(r.path)]) {
        const res = await send(r, target, false);
        tried += 1;
        if (res.status < 300) granted.push(`${r.method} ${target} -> ${res.status}`);
        expect(res.headers['x-request-id']).toBeTruthy();
      }
    }
    expect(granted).toEqual([]);
    expect(tried).toBeGreaterThan(routes.length * 35);
    expect(await fingerprint(h.db)).toEqual(before);
    expect(await queuesPaused()).toEqual([]);
  });

  it('are refused 401 wherever the router would serve them (as shown with the token, on reads)', async () => {
    const reads = routes.filter((r) => r.method === 'GET');
    let served = 0;
    for (const r of reads) {
      for (const target of spellings(r.path)) {
        const withToken = await send(r, target, true);
        const without = await send(r, target, false);
        if (withToken.status < 300) {
          served += 1;
          expect({ target, status: without.status, code: without.body?.code }).toEqual({ target, status: 401, code: 'UNAUTHORIZED' });
        } else {
          expect({ target, status: without.status < 300 }).toEqual({ target, status: false });
        }
      }
    }
    // The router decodes percent-encoded letters and absolute-form targets: those spellings reach
    // the routes, and are exactly the ones that must meet the check.
    expect(served).toBeGreaterThan(reads.length * 5);
  });
});

describe('console pages keep their security headers under every spelling', () => {
  const pages = () => ['/console', '/console/inventory', `/console/orders/${held.id}`];

  it('each spelling the router serves has the console CSP and refuses framing', async () => {
    let served = 0;
    for (const page of pages()) {
      for (const target of [page, ...spellings(page)]) {
        const res = await send({ method: 'GET', path: page }, target, false);
        if (res.status !== 200) continue;
        served += 1;
        expect({ target, csp: res.headers['content-security-policy'] }).toEqual({ target, csp: expect.stringContaining("frame-ancestors 'none'") });
        expect(res.headers['content-security-policy']).toContain("script-src 'self'");
        expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
      }
    }
    expect(served).toBeGreaterThan(pages().length * 5);
  });
});
