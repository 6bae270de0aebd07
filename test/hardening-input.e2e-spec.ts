import { createHmac, randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { Answer } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { expectProblem, expectValidation, fingerprint } from './support/problem.js';
import { rawRequest } from './support/raw-http.js';

/**
 * Bad input (hardening issue, points 1-8): each is a problem+json contract answer, never a 500,
 * and changes nothing — every case compares a digest of the whole database before and after.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });

let sku: string;
let held: any;

beforeAll(async () => {
  sku = uniqueSku('IN');
  expect((await h.api.putSku(sku, 10, 1000)).status).toBe(200);
  const res = await h.api.order(randomUUID(), { customerId: 'c-held', items: [{ sku, quantity: 2 }] });
  expect(res.status).toBe(201);
  held = res.body;
});

/** Sends a request that must be refused; the database must be exactly as it was. */
async function refused(send: () => Promise<Answer>, check: (res: Answer) => void): Promise<Answer> {
  const before = await fingerprint(h.db);
  const res = await send();
  check(res);
  expect(await fingerprint(h.db)).toEqual(before);
  return res;
}

const raw = (method: string, path: string, text: string, headers: Record<string, string> = {}, admin = false) =>
  h.api.send(method, path, { raw: text, headers, admin });
const tryRaw = (text: string) => raw('POST', '/orders', text, { 'idempotency-key': randomUUID() });
const line = () => ({ sku, quantity: 1 });

describe('1. a path segment that is not valid percent-encoding is a malformed id', () => {
  const segments = ['%ff', '%00%ff', '%c0%af', 'HELD%ff'];
  const routes: [string, (s: string) => string, boolean, unknown][] = [
    ['GET', (s) => `/orders/${s}`, false, undefined],
    ['POST', (s) => `/orders/${s}/confirm`, false, { paymentToken: 'tok_x' }],
    ['POST', (s) => `/orders/${s}/cancel`, false, undefined],
    ['POST', (s) => `/orders/${s}/extend`, false, { extendByMs: 60_000 }],
    ['GET', (s) => `/inventory/${s}`, false, undefined],
    ['GET', (s) => `/admin/orders/${s}`, true, undefined],
    ['GET', (s) => `/admin/orders/${s}/events`, true, undefined],
    ['POST', (s) => `/admin/orders/${s}/force-confirm`, true, { reason: 'r' }],
    ['POST', (s) => `/admin/orders/${s}/force-cancel`, true, { reason: 'r' }],
    ['POST', (s) => `/admin/orders/${s}/retry-now`, true, undefined],
    ['POST', (s) => `/admin/orders/${s}/acknowledge`, true, { reason: 'r' }],
    ['DELETE', (s) => `/admin/webhooks/${s}`, true, undefined],
    ['GET', (s) => `/admin/webhooks/${s}/deliveries`, true, undefined],
    ['POST', (s) => `/admin/webhooks/w/deliveries/${s}/retry`, true, undefined],
  ];
  const cases = routes.flatMap(([method, path, admin, body]) => segments.map((s) => [method, path(s), admin, body] as const));

  it.each(cases)('%s %s is 404 NOT_FOUND', async (method, template, admin, body) => {
    const path = template.replace('HELD', held.id);
    await refused(() => h.api.send(method, path, { body, admin }), (res) => expectProblem(res, 404, 'NOT_FOUND'));
  });

  it.each(segments)('PUT /admin/inventory/%s is 400 VALIDATION_FAILED (a malformed SKU there)', async (segment) => {
    const path = `/admin/inventory/${segment.replace('HELD', sku)}`;
    await refused(
      () => h.api.admin('PUT', path, { name: 'x', priceMinor: 1, currency: 'USD', onHand: 1 }),
      (res) => expectValidation(res, /sku/),
    );
  });

  // PUT /admin/webhooks/{name} creates the endpoint named there: a malformed name is the caller's
  // input, refused like a malformed SKU on PUT /admin/inventory/{sku}.
  it.each(segments)('PUT /admin/webhooks/%s is 400 VALIDATION_FAILED (a malformed name there)', async (segment) => {
    const body = { url: 'http://127.0.0.1:9/x', events: ['order.reserved'], secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` };
    await refused(() => h.api.admin('PUT', `/admin/webhooks/${segment.replace('HELD', held.id)}`, body), (res) => expectValidation(res, /name/));
  });

  it.each(segments)('without the bearer token, admin routes with %s are 401 first', async (segment) => {
    const s = segment.replace('HELD', held.id);
    for (const [method, path] of [['PUT', `/admin/inventory/${s}`], ['POST', `/admin/orders/${s}/force-cancel`], ['GET', `/admin/orders/${s}`]]) {
      await refused(() => h.api.send(method, path, { body: method === 'GET' ? undefined : { reason: 'r' } }), (res) => expectProblem(res, 401, 'UNAUTHORIZED'));
    }
  });

  it('the held order is untouched and still answers', async () => {
    const res = await h.api.get(`/orders/${held.id}`);
    expect(res.body).toMatchObject({ status: 'TRY_SUCCESS', updatedAt: held.updatedAt });
  });
});

describe('2. JSON nested deeper than 32 levels is VALIDATION_FAILED, whatever else is wrong with it', () => {
  const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const objects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  const deep = (res: Answer) => {
    expectValidation(res);
    expect(res.body.detail).toMatch(/nested deeper than 32 levels/);
  };

  it('2,000 nested arrays as the items of a Try', async () => {
    await refused(() => tryRaw(`{"customerId":"c","items":${arrays(2000)}}`), deep);
  });

  it('2,500 nested objects as the whole body of a Try', async () => {
    await refused(() => tryRaw(objects(2500)), deep);
  });

  it('32,000 nested arrays, as deep as 64 KiB allows', async () => {
    const text = arrays(32_000);
    expect(text.length).toBeLessThan(64 * 1024);
    await refused(() => tryRaw(text), deep);
  });

  it('a deep value beside an unknown SKU and without an Idempotency-Key: depth is judged first', async () => {
    await refused(() => raw('POST', '/orders', `{"customerId":"c","items":[{"sku":"NOPE","quantity":1}],"x":${arrays(3000)}}`), deep);
  });

  it('33 levels are refused for depth; 32 are not (that body fails for being an array instead)', async () => {
    await refused(() => tryRaw(arrays(33)), deep);
    await refused(
      () => tryRaw(arrays(32)),
      (res) => {
        expectValidation(res);
        expect(res.body.detail).not.toMatch(/nested deeper/);
      },
    );
  });

  it('in a SKU name on PUT /admin/inventory', async () => {
    await refused(() => raw('PUT', `/admin/inventory/${sku}`, `{"name":${arrays(2000)},"priceMinor":1,"currency":"USD","onHand":1}`, {}, true), deep);
  });

  it('in a participant Try', async () => {
    await refused(() => raw('POST', '/tcc/inventory/try', `{"transactionId":"t-deep","items":${arrays(2000)}}`, {}, true), deep);
  });

  it('in a Confirm body: no charge, the order stays TRY_SUCCESS', async () => {
    await refused(() => raw('POST', `/orders/${held.id}/confirm`, `{"paymentToken":${objects(2000)}}`), deep);
    expect((await h.sim.ledger()).chargeAttempts.filter((a) => a.reference === held.id)).toEqual([]);
  });

  it('in an operator reason', async () => {
    await refused(() => raw('POST', `/admin/orders/${held.id}/force-cancel`, `{"reason":${arrays(2000)}}`, {}, true), deep);
  });
});

describe('3. U+0000 or a lone surrogate in a string is VALIDATION_FAILED', () => {
  // JSON text with the escapes as a client sends them: "\u0000", "\ud800" (high alone), "\udc00" (low alone).
  const bad = { nul: 'c\\u0000x', high: 'c\\ud800x', low: '\\udc00c', reversed: '\\udc00\\ud800' };
  const items = `[{"sku":"${'SKU'}","quantity":1}]`;

  it.each(Object.entries(bad))('customerId with %s: no order', async (_label, text) => {
    await refused(() => tryRaw(`{"customerId":"${text}","items":${items.replace('SKU', sku)}}`), (res) => expectValidation(res, /customerId/));
  });

  it.each(Object.entries(bad))('a SKU name with %s: the SKU keeps its name, a new one is not created', async (_label, text) => {
    const body = `{"name":"${text}","priceMinor":5,"currency":"USD","onHand":50}`;
    await refused(() => raw('PUT', `/admin/inventory/${sku}`, body, {}, true), (res) => expectValidation(res, /name/));
    await refused(() => raw('PUT', `/admin/inventory/${uniqueSku('NEW')}`, body, {}, true), (res) => expectValidation(res, /name/));
  });

  it.each(Object.entries(bad))('a force-confirm, force-cancel or acknowledge reason with %s: the order is untouched', async (_label, text) => {
    for (const action of ['force-confirm', 'force-cancel', 'acknowledge']) {
      await refused(() => raw('POST', `/admin/orders/${held.id}/${action}`, `{"reason":"${text}"}`, {}, true), (res) => expectValidation(res, /reason/));
    }
  });

  it.each(Object.entries(bad))('a bulk-cancel reason with %s cancels nothing', async (_label, text) => {
    await refused(
      () => raw('POST', '/admin/orders/bulk-cancel', `{"filter":{"customerId":"c-held"},"reason":"${text}","dryRun":false}`, {}, true),
      (res) => expectValidation(res, /reason/),
    );
  });

  it.each(Object.entries(bad))('a paymentToken with %s: nothing is charged', async (_label, text) => {
    await refused(() => raw('POST', `/orders/${held.id}/confirm`, `{"paymentToken":"${text}"}`), (res) => expectValidation(res, /paymentToken/));
    expect((await h.sim.ledger()).chargeAttempts.filter((a) => a.reference === held.id)).toEqual([]);
  });

  it('a key with U+0000 is refused too', async () => {
    await refused(() => tryRaw(`{"customerId":"c","items":${items.replace('SKU', sku)},"\\u0000":1}`), (res) => expectValidation(res));
  });

  it('a string in a query is held to the same rule', async () => {
    await refused(() => h.api.get('/admin/orders?customerId=a%00b', true), (res) => expectValidation(res, /customerId/));
  });

  it('a surrogate pair (an emoji) is a fine customerId: the rule is no broader than it says', async () => {
    const res = await tryRaw(`{"customerId":"c-\\ud83d\\ude00","items":${items.replace('SKU', sku)}}`);
    expect(res.status).toBe(201);
    expect(res.body.customerId).toBe('c-😀');
    expect((await h.api.post(`/orders/${res.body.id}/cancel`)).status).toBe(200);
  });
});

describe('4. a value of the wrong JSON type is VALIDATION_FAILED', () => {
  it.each([
    ['a line that is an empty array', '[[]]'],
    ['a line that is an array of a line', `[["${'S'}",1]]`],
    ['a line that is null', '[null]'],
    ['a line that is a string', '["SKU-1"]'],
    ['a line that is a number', '[1]'],
    ['items that are an object', '{"sku":"SKU-1","quantity":1}'],
    ['items that are a string', '"SKU-1"'],
  ])('a Try with %s', async (_label, items) => {
    await refused(() => tryRaw(`{"customerId":"c","items":${items}}`), (res) => expectValidation(res, /items/));
  });

  it('a participant Try with a line that is an array', async () => {
    await refused(() => raw('POST', '/tcc/inventory/try', '{"transactionId":"t-arr","items":[[]]}', {}, true), (res) => expectValidation(res, /items/));
  });

  it('a body that is an array of valid lines', async () => {
    await refused(() => tryRaw(JSON.stringify([line()])), (res) => expectValidation(res));
  });
});

describe('5. __proto__ and constructor are refused like any unknown field', () => {
  it.each([
    ['__proto__ at the top of a Try', () => `{"customerId":"c","items":[${JSON.stringify(line())}],"__proto__":{"isAdmin":true}}`, /__proto__/],
    ['__proto__ in a line', () => `{"customerId":"c","items":[{"sku":"${sku}","quantity":1,"__proto__":{"quantity":500}}]}`, /__proto__/],
    ['constructor at the top of a Try', () => `{"customerId":"c","items":[${JSON.stringify(line())}],"constructor":{"prototype":{"x":1}}}`, /constructor/],
    ['constructor in a line', () => `{"customerId":"c","items":[{"sku":"${sku}","quantity":1,"constructor":1}]}`, /constructor/],
  ])('%s', async (_label, body, field) => {
    await refused(() => tryRaw(body()), (res) => expectValidation(res, field));
  });

  it('__proto__ on PUT /admin/inventory', async () => {
    await refused(
      () => raw('PUT', `/admin/inventory/${sku}`, '{"priceMinor":1,"currency":"USD","onHand":1,"__proto__":{"onHand":999}}', {}, true),
      (res) => expectValidation(res, /__proto__/),
    );
  });

  it('__proto__ in a Confirm body: nothing is charged', async () => {
    await refused(() => raw('POST', `/orders/${held.id}/confirm`, '{"__proto__":{"paymentToken":"tok_x"}}'), (res) => expectValidation(res, /__proto__/));
  });

  it('constructor in a participant Try and an operator reason', async () => {
    await refused(
      () => raw('POST', '/tcc/inventory/try', `{"transactionId":"t-c","items":[${JSON.stringify(line())}],"constructor":{}}`, {}, true),
      (res) => expectValidation(res, /constructor/),
    );
    await refused(() => raw('POST', `/admin/orders/${held.id}/force-cancel`, '{"reason":"r","constructor":{}}', {}, true), (res) => expectValidation(res, /constructor/));
  });

  it('__proto__ and constructor as query parameters', async () => {
    await refused(() => h.api.get('/admin/orders?__proto__=x', true), (res) => expectValidation(res, /__proto__/));
    await refused(() => h.api.get('/admin/orders?constructor=x', true), (res) => expectValidation(res, /constructor/));
    await refused(() => h.api.get('/admin/reconciliation?__proto__[sinceMinutes]=1', true), (res) => expectValidation(res));
  });

  it('afterwards, plain requests behave as before (nothing was polluted)', async () => {
    const res = await h.api.order(randomUUID(), { customerId: 'c-after', items: [line()] });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('isAdmin');
    expect(res.body.items).toEqual([{ sku, quantity: 1, unitPriceMinor: 1000, allocations: [{ locationId: 'default', quantity: 1 }] }]);
    expect((await h.api.post(`/orders/${res.body.id}/cancel`)).status).toBe(200);
  });
});

describe('6. a declared Content-Length over 64 KiB is 413 at once, before the body', () => {
  const head = (method: string, path: string, length: number, admin: boolean) =>
    `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\n` +
    `${admin ? `Authorization: Bearer ${ADMIN_TOKEN}\r\n` : ''}Content-Length: ${length}\r\n\r\n{"customerId":`;

  it.each([
    ['POST', '/orders', false, 1e9],
    ['POST', '/orders', false, 65_537],
    ['PUT', '/admin/inventory/SKU-CL', true, 1e9],
    ['POST', '/tcc/inventory/try', true, 1e9],
    ['POST', '/orders/HELD/confirm', false, 1e9],
    ['POST', '/admin/orders/HELD/force-cancel', true, 1e9],
  ])('%s %s declaring %d bytes and sending a few', async (method, path, admin, length) => {
    const res = await refused(
      async () => {
        const answer = await rawRequest(h.svc.url, head(method, path.replace('HELD', held.id), length, admin), { timeoutMs: 3000 });
        return { status: answer.status, body: answer.body, headers: new Headers(answer.headers), ms: answer.ms, closed: answer.closed } as Answer & { ms: number; closed: boolean };
      },
      (res) => expectProblem(res, 413, 'PAYLOAD_TOO_LARGE'),
    );
    const { ms, closed } = res as Answer & { ms: number; closed: boolean };
    expect(ms).toBeLessThan(1000);
    expect(closed).toBe(true);
  });
});

describe('requests HTTP itself cannot parse are answered in the contract\'s words too', () => {
  it.each([
    ['raw bytes in the path', 'GET /orders/\x80\xff HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a space in the path', 'GET /orders/a b HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a header value with NUL', 'GET /orders/x HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n'],
    ['a header name with a space', 'GET /orders/x HTTP/1.1\r\nHost: x\r\nBad Header: v\r\n\r\n'],
    ['headers over the limit', `GET /orders/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['a Content-Length that is not a number', 'POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}'],
    ['both Content-Length and Transfer-Encoding', 'POST /orders HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}'],
    ['an unknown method', 'BREW /orders HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('%s: 400 VALIDATION_FAILED problem+json, and the connection is closed', async (_label, request) => {
    const before = await fingerprint(h.db);
    const answer = await rawRequest(h.svc.url, Buffer.from(request, 'latin1'));
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(answer.body).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'request', message: expect.any(String) }] });
    expect(answer.closed).toBe(true);
    expect(await fingerprint(h.db)).toEqual(before);
  });
});

describe('7. admin cursors are parsed strictly', () => {
  let cursor: string;
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) expect((await h.api.order(randomUUID(), { customerId: 'c-page', items: [line()] })).status).toBe(201);
    const page = await h.api.get('/admin/orders?limit=1', true);
    expect(page.status).toBe(200);
    cursor = page.body.nextCursor;
    expect(typeof cursor).toBe('string');
    expect((await h.api.get(`/admin/orders?limit=1&cursor=${encodeURIComponent(cursor)}`, true)).status).toBe(200);
  });

  /**
   * What only a holder of the deployment's cursor key could make (it is in the database): a
   * correctly signed cursor around any inner value, signed as the service signs its own.
   */
  let cursorKey: Buffer;
  beforeAll(async () => {
    const [{ key }] = await h.db.query<{ key: Buffer }>(`SELECT key FROM deployment_keys`);
    cursorKey = createHmac('sha256', 'tcc-cursor:admin-orders').update(createHmac('sha256', key).update('paging-cursors').digest()).digest();
  });
  function signed(inner: unknown): string {
    const payload = Buffer.from(typeof inner === 'string' ? inner : JSON.stringify(inner)).toString('base64url');
    return `${payload}.${createHmac('sha256', cursorKey).update(payload).digest('base64url')}`;
  }
  const list = (c: string) => h.api.get(`/admin/orders?limit=1&cursor=${encodeURIComponent(c)}`, true);

  it('signs as the service does: its own cursor, signed here, is accepted', async () => {
    expect(signed(Buffer.from(cursor.split('.')[0], 'base64url').toString())).toBe(cursor);
  });

  it.each([
    ['an extra .x part', (c: string) => `${c}.x`],
    ['an extra part in front', (c: string) => `x.${c}`],
    ['two dots', (c: string) => c.replace('.', '..')],
    ['no signature', (c: string) => c.split('.')[0]],
    ['a signature from another key', (c: string) => `${c.split('.')[0]}.${createHmac('sha256', 'guess').update(c.split('.')[0]).digest('base64url')}`],
  ])('a cursor with %s is VALIDATION_FAILED', async (_label, mangle) => {
    await refused(() => list(mangle(cursor)), (res) => expectValidation(res, /cursor/));
  });

  const id = randomUUID();
  it.each([
    ['a date that does not exist', ['2026-02-30 00:00:00+00', id]],
    ['month 13', ['2026-13-01 00:00:00+00', id]],
    ['year 0', ['0000-01-01 00:00:00+00', id]],
    ['an offset of +99', ['2026-01-01 00:00:00+99', id]],
    ['an id that is not a UUID', ['2026-01-01 00:00:00+00', "x' OR 1=1 --"]],
    ['a third element', ['2026-01-01 00:00:00+00', id, 1]],
    ['an object', { createdAt: '2026-01-01 00:00:00+00', id }],
    ['text that is not JSON', 'not json'],
  ])('a well-signed cursor holding %s is VALIDATION_FAILED (never a 500)', async (_label, inner) => {
    await refused(() => list(signed(inner)), (res) => expectValidation(res, /cursor/));
  });
});

describe('8. priceMinor is an integer up to 100000000000, so every total is exact', () => {
  it.each([
    ['100000000001', '100000000001'],
    ['2^53 + 1', '9007199254740993'],
    ['1e300', '1e300'],
    ['a fraction', '100.5'],
    ['a string', '"100"'],
    ['negative', '-1'],
  ])('priceMinor %s is VALIDATION_FAILED; the SKU keeps its price', async (_label, value) => {
    await refused(() => raw('PUT', `/admin/inventory/${sku}`, `{"priceMinor":${value},"currency":"USD","onHand":10}`, {}, true), (res) => expectValidation(res, /priceMinor/));
    expect((await h.api.get(`/inventory/${sku}`)).body.priceMinor).toBe(1000);
  });

  it('the largest order (50 lines × 1000 × 100000000000) totals exactly 5000000000000000, in the answer, the database and the charge', async () => {
    const skus = Array.from({ length: 50 }, (_, i) => uniqueSku(`MAX${i}`));
    for (const s of skus) expect((await raw('PUT', `/admin/inventory/${s}`, '{"priceMinor":100000000000,"currency":"USD","onHand":1000}', {}, true)).status).toBe(200);
    const res = await fetch(`${h.svc.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ customerId: 'c-max', items: skus.map((s) => ({ sku: s, quantity: 1000 })) }),
    });
    const text = await res.text();
    expect(res.status).toBe(201);
    expect(text).toMatch(/"amountMinor"\s*:\s*5000000000000000[,}\s]/);
    const order = JSON.parse(text);
    expect(Number.isSafeInteger(order.amountMinor)).toBe(true);
    expect(order.items.every((i: any) => i.unitPriceMinor === 100_000_000_000)).toBe(true);
    const [row] = await h.db.query<{ amount: string }>('SELECT amount_minor::text AS amount FROM orders WHERE id = $1', [order.id]);
    expect(row.amount).toBe('5000000000000000');
    const confirmed = await h.api.post(`/orders/${order.id}/confirm`, {});
    expect(confirmed.status).toBe(200);
    expect((await h.sim.ledger()).payments.filter((p) => p.reference === order.id).map((p) => p.amountMinor)).toEqual([5_000_000_000_000_000]);
  });
});

it('leaves the stock invariant intact', async () => {
  const [row] = await h.db.query<{ n: string }>('SELECT count(*)::text AS n FROM stock WHERE reserved < 0 OR reserved > on_hand');
  expect(row.n).toBe('0');
});
