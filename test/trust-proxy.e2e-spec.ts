import { randomUUID } from 'node:crypto';
import { REDIS_URL } from './support/env.js';
import { useHarness } from './support/harness.js';
import { client, Client, waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { RATE_WINDOW_MS, roomInWindow } from './support/rate-window.js';
import { rawRequest } from './support/raw-http.js';
import { ServiceProcess, startService } from './support/service.js';

/**
 * TRUST_PROXY: behind a trusted proxy the client is the rightmost X-Forwarded-For address that is
 * not a trusted proxy, for the rate limit and the request log; from anyone else, the TCP peer. The
 * tests' requests come from 127.0.0.1, trusted or not as each service is told.
 */
const h = useHarness();
const own: ServiceProcess[] = [];

afterAll(async () => {
  await Promise.all(own.map((s) => s.stop()));
});

async function start(env: Record<string, string>): Promise<{ svc: ServiceProcess; api: Client }> {
  const svc = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api', ...env });
  own.push(svc);
  return { svc, api: client(svc.url) };
}

describe('the checkout rate limit behind a trusted proxy (TRUST_PROXY=127.0.0.1, 3 a window)', () => {
  let api: Client;
  let url: string;
  let sku: string;
  /** GET /inventory/{sku} as a proxy forwarding `forwarded` (a header per entry when a list). */
  const stock = async (forwarded: string | string[]) => {
    const headers = (Array.isArray(forwarded) ? forwarded : [forwarded]).map((f) => `X-Forwarded-For: ${f}\r\n`).join('');
    return (await rawRequest(url, `GET /inventory/${sku} HTTP/1.1\r\nHost: t\r\n${headers}Connection: close\r\n\r\n`)).status;
  };

  beforeAll(async () => {
    ({ api, svc: { url } } = await start({ RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_WINDOW_MS: String(RATE_WINDOW_MS), TRUST_PROXY: '127.0.0.1, 10.0.0.0/8', QUEUE_PREFIX: `${h.prefix}-rl` }));
    sku = uniqueSku('XFF');
    expect((await api.putSku(sku, 100)).status).toBe(200);
    await roomInWindow(REDIS_URL, 7000);
  });

  it('counts each forwarded client apart, and a forged left-most entry does not make a new one', async () => {
    expect([await stock('198.51.100.1'), await stock('198.51.100.1'), await stock('198.51.100.1')]).toEqual([200, 200, 200]);
    expect(await stock('198.51.100.1')).toBe(429);
    // Another client behind the same proxy still gets through.
    expect(await stock('198.51.100.2')).toBe(200);
    // Hostile spellings of the first client are still the first client.
    expect(await stock('6.6.6.6, 198.51.100.1')).toBe(429);
    expect(await stock(`${randomUUID()}, 7.7.7.7,198.51.100.1`)).toBe(429);
    expect(await stock(['9.9.9.9', '198.51.100.1'])).toBe(429); // two headers, read as one list
    expect(await stock('  198.51.100.1  ')).toBe(429);
    expect(await stock('::ffff:198.51.100.1')).toBe(429);
    expect(await stock('198.51.100.1, 10.0.0.7')).toBe(429); // a second trusted proxy on the way
  });

  it('counts IPv6 clients, written any way, as one each', async () => {
    expect([await stock('2001:db8::1'), await stock('2001:DB8:0:0::1'), await stock('[2001:db8::1]')]).toEqual([200, 200, 200]);
    expect(await stock('2001:db8:0000::0001')).toBe(429);
    expect(await stock('2001:db8::2')).toBe(200);
  });

  it('counts a client written with its port (as some balancers write it) as that address, whatever the port', async () => {
    expect([await stock('198.51.100.20:443'), await stock('198.51.100.20:51234'), await stock('198.51.100.20')]).toEqual([200, 200, 200]);
    expect(await stock('198.51.100.20:60000')).toBe(429);
    expect([await stock('[2001:db8::20]:443'), await stock('2001:db8::20'), await stock('[2001:db8::20]:1')]).toEqual([200, 200, 200]);
    expect(await stock('[2001:db8::20]:2')).toBe(429);
  });

  it('judges garbage forwarded by a trusted proxy as that proxy, never as a new client each time', async () => {
    const statuses = [];
    for (const junk of ['garbage', 'unknown', 'proxy.example:443', '"198.51.100.9"', '', 'fe80::1%eth0']) statuses.push(await stock(junk));
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });
});

it('from a peer that is not a trusted proxy, X-Forwarded-For is not believed', async () => {
  const { svc } = await start({ RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_WINDOW_MS: String(RATE_WINDOW_MS), TRUST_PROXY: '10.0.0.0/8', QUEUE_PREFIX: `${h.prefix}-untrusted` });
  const sku = uniqueSku('XFFNO');
  expect((await client(svc.url).putSku(sku, 100)).status).toBe(200);
  await roomInWindow(REDIS_URL, 4000);
  const statuses = [];
  for (let i = 1; i <= 5; i++) statuses.push((await rawRequest(svc.url, `GET /inventory/${sku} HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 203.0.113.${i}\r\nConnection: close\r\n\r\n`)).status);
  expect(statuses).toEqual([200, 200, 200, 429, 429]);
});

it('the request log names the forwarded client, on the fast path and through Fastify alike', async () => {
  const { svc, api } = await start({ TRUST_PROXY: '127.0.0.1' });
  const sku = uniqueSku('XFFLOG');
  expect((await api.putSku(sku, 10)).status).toBe(200);
  const fast = await api.send('POST', '/orders', { body: { customerId: 'c', items: [{ sku, quantity: 1 }] }, headers: { 'idempotency-key': randomUUID(), 'x-forwarded-for': '1.2.3.4, 198.51.100.30', 'x-request-id': 'xff-fast' } });
  expect(fast.status).toBe(201);
  const slow = await api.send('GET', `/inventory/${sku}`, { headers: { 'x-forwarded-for': '2001:db8::30', 'x-request-id': 'xff-fastify' } });
  expect(slow.status).toBe(200);
  const direct = await api.send('GET', `/inventory/${sku}`, { headers: { 'x-request-id': 'xff-none' } });
  expect(direct.status).toBe(200);
  const lineOf = (id: string) => waitFor(`the log line of ${id}`, async () => svc.logs.flatMap((c) => c.split('\n')).find((l) => l.includes(`"id":"${id}"`) && l.includes('request completed')));
  expect(JSON.parse(await lineOf('xff-fast')).req).toMatchObject({ route: '/orders', remoteAddress: '198.51.100.30' });
  expect(JSON.parse(await lineOf('xff-fastify')).req).toMatchObject({ route: '/inventory/:sku', remoteAddress: '2001:db8::30' });
  expect(JSON.parse(await lineOf('xff-none')).req).toMatchObject({ remoteAddress: '127.0.0.1' });
  // The fast path answered the Try (the log line is the same either way; the counter tells).
  expect((await api.get('/metrics')).body).toMatch(/tcc_http_fast_path_requests_total\{route="\/orders"\} [1-9]/);
});
