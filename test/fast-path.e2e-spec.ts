import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { client, Client } from './support/http.js';
import { RawConnection, rawRequest } from './support/raw-http.js';
import { ServiceProcess, startService } from './support/service.js';

/**
 * Try and Confirm are answered straight from node:http (src/http/fast-path.ts) unless the rate
 * limit is on. Both ways must give the same contract: the same statuses, problem bodies, media
 * types and headers. Here the fast-path process and a process whose rate limit (set too high to
 * bite) sends every request through Fastify and Nest answer the same requests side by side, over
 * the same database; the fast path's counter shows which way each request went.
 */
const h = useHarness({});
let nest: ServiceProcess;
let viaNest: Client;

beforeAll(async () => {
  nest = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, RATE_LIMIT_PER_MINUTE: '1000000' });
  viaNest = client(nest.url);
  await h.api.putSku('FAST-1', 100);
  await h.api.putSku('FAST-EUR', 100, 500, 'EUR');
  await h.api.putSku('FAST-0', 0);
});

afterAll(async () => {
  await nest?.stop();
});

async function served(api: Client): Promise<{ tries: number; confirms: number }> {
  const text = (await api.get('/metrics')).body as string;
  const count = (route: string) => Number(new RegExp(`^tcc_http_fast_path_requests_total\\{route="${route.replace(/[/:]/g, (c) => `\\${c}`)}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return { tries: count('/orders'), confirms: count('/orders/:id/confirm') };
}

/** What must be equal between the two ways: everything but what is new per order (ids, times). */
function shape(a: { status: number; body: any; headers: Headers }) {
  const body = a.body && typeof a.body === 'object' && 'id' in a.body ? { ...a.body, id: '<id>', transactionId: '<tx>', reservationExpiresAt: '<t>', createdAt: '<t>', updatedAt: '<t>', paymentId: a.body.paymentId && '<pay>' }
      : a.body;
  return { status: a.status, type: a.headers.get('content-type'), body };
}

const order = (sku: string, quantity = 1) => ({ customerId: 'c-fast', items: [{ sku, quantity }] });

it('a Try answers the same either way, for every outcome, and the fast path answered it', async () => {
  const before = await served(h.api);
  const cases: { name: string; headers?: Record<string, string>; raw?: string; body?: unknown }[] = [
    { name: 'created', body: order('FAST-1') },
    { name: 'sold out', body: order('FAST-0') },
    { name: 'unknown SKU', body: order('NOPE-1') },
    { name: 'mixed currencies', body: { customerId: 'c', items: [{ sku: 'FAST-1', quantity: 1 }, { sku: 'FAST-EUR', quantity: 1 }] } },
    { name: 'repeated SKU', body: { customerId: 'c', items: [{ sku: 'FAST-1', quantity: 1 }, { sku: 'FAST-1', quantity: 2 }] } },
    { name: 'unknown field', body: { ...order('FAST-1'), coupon: 'x' } },
    { name: 'wrong type', body: { customerId: 'c', items: [{ sku: 'FAST-1', quantity: '1' }] } },
    { name: 'array body', raw: '[1]' },
    { name: 'empty body', raw: '' },
    { name: 'malformed JSON', raw: '{"customerId":' },
    { name: 'NUL in a string', body: { customerId: 'c\u0000', items: [{ sku: 'FAST-1', quantity: 1 }] } },
    { name: 'no key', headers: {}, body: order('FAST-1') },
    { name: 'bad key', headers: { 'idempotency-key': 'has space' }, body: order('FAST-1') },
  ];
  for (const c of cases) {
    const headers = c.headers ?? { 'idempotency-key': randomUUID() };
    const fast = await h.api.send('POST', '/orders', { body: c.body, raw: c.raw, headers });
    const slow = await viaNest.send('POST', '/orders', { body: c.body, raw: c.raw, headers: c.headers ?? { 'idempotency-key': randomUUID() } });
    expect([c.name, shape(fast)]).toEqual([c.name, shape(slow)]);
    expect([c.name, fast.headers.get('x-request-id')]).toEqual([c.name, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
  }
  // Replays and a reused key, each way on its own key.
  for (const api of [h.api, viaNest]) {
    const key = randomUUID();
    const first = await api.order(key, order('FAST-1', 2));
    const again = await api.order(key, { items: [{ quantity: 2, sku: 'FAST-1' }], customerId: 'c-fast' });
    expect([first.status, again.status, again.body.id]).toEqual([201, 200, first.body.id]);
    expect((await api.order(key, order('FAST-1', 3))).body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  }
  const after = await served(h.api);
  expect(after.tries - before.tries).toBe(cases.length + 3);
  expect(await served(viaNest)).toEqual({ tries: 0, confirms: 0 });
});

it('a Confirm answers the same either way: paid, paid again, unknown, canceled, a bad body', async () => {
  const before = await served(h.api);
  const outcomes = [];
  const unknown = randomUUID();
  for (const api of [h.api, viaNest]) {
    const paid = (await api.order(randomUUID(), order('FAST-1'))).body.id;
    const canceled = (await api.order(randomUUID(), order('FAST-1'))).body.id;
    await api.post(`/orders/${canceled}/cancel`);
    outcomes.push([
      shape(await api.post(`/orders/${paid}/confirm`, { paymentToken: 'tok_fast' })),
      shape(await api.post(`/orders/${paid}/confirm`)),
      shape(await api.post(`/orders/${unknown}/confirm`)),
      shape(await api.post(`/orders/${canceled}/confirm`)),
      shape(await api.post(`/orders/${paid}/confirm`, { paymentToken: 7 })),
    ]);
  }
  expect(outcomes[0]).toEqual(outcomes[1]);
  expect(outcomes[0].map((o) => o.status)).toEqual([200, 200, 404, 409, 400]);
  expect((await served(h.api)).confirms - before.confirms).toBe(5);
});

it('a body whose bytes arrive split inside a character is read as the same text either way', async () => {
  const before = await served(h.api);
  const customerId = 'c-€-\u{1F600}';
  const bytes = Buffer.from(JSON.stringify({ customerId, items: [{ sku: 'FAST-1', quantity: 1 }] }), 'utf8');
  const cut = bytes.indexOf(Buffer.from('\u{1F600}', 'utf8')) + 2; // two of the emoji's four bytes in each piece
  const answers = [];
  for (const url of [h.svc.url, nest.url]) {
    const c = new RawConnection(url);
    try {
      c.trickle([`POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\nContent-Length: ${bytes.length}\r\n\r\n`, bytes.subarray(0, cut), bytes.subarray(cut)], 50);
      const reply = await c.next(5000);
      answers.push({ status: reply.status, customerId: reply.body?.customerId });
    } finally {
      c.destroy();
    }
  }
  expect(answers).toEqual([{ status: 201, customerId }, { status: 201, customerId }]);
  expect((await served(h.api)).tries - before.tries).toBe(1);
});

it('what the fast path does not take still gets the contract: a chunked body, a query, a body over 64 KiB', async () => {
  const before = await served(h.api);
  const body = JSON.stringify(order('FAST-1'));
  const chunked = await rawRequest(
    h.svc.url,
    `POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
  );
  expect(chunked.status).toBe(201);
  expect((await h.api.send('POST', '/orders?x=1', { body: order('FAST-1'), headers: { 'idempotency-key': randomUUID() } })).status).toBe(201);
  const big = await rawRequest(h.svc.url, `POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: k\r\nContent-Length: ${64 * 1024 + 1}\r\n\r\n{`);
  expect([big.status, big.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  expect(await served(h.api)).toEqual(before);
});

it('a fast-path answer is logged and measured like any other: its access-log line carries the caller\'s request id', async () => {
  const id = `fast-${randomUUID()}`;
  const res = await h.api.send('POST', '/orders', { body: order('FAST-0'), headers: { 'idempotency-key': randomUUID(), 'x-request-id': id } });
  expect([res.status, res.headers.get('x-request-id')]).toEqual([409, id]);
  const line = await new Promise<any>((resolve, reject) => {
    const deadline = Date.now() + 3000;
    const look = () => {
      const found = h.svc.logs.map((l) => (l.startsWith('{') ? JSON.parse(l) : {})).find((l) => l.req?.id === id);
      if (found) resolve(found);
      else if (Date.now() > deadline) reject(new Error('no access-log line'));
      else setTimeout(look, 50);
    };
    look();
  });
  expect(line).toMatchObject({ msg: 'request completed', req: { id, method: 'POST', url: '/orders' }, res: { statusCode: 409 } });
  const metrics = (await h.api.get('/metrics')).body as string;
  expect(metrics).toMatch(/tcc_http_request_duration_seconds_count\{method="POST",route="\/orders",status="409"\} [1-9]/);
});
