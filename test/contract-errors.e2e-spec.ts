import { randomBytes, randomUUID } from 'node:crypto';
import { Answer, client } from './support/http.js';
import { useHarness } from './support/harness.js';

const h = useHarness({});


const sku = (p = 'E') => `${p}-${randomBytes(4).toString('hex')}`;
const orderBody = (items: Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({ customerId: 'c-1', items, ...extra });
const tcc = (op: string, body: unknown) => h.api.send('POST', `/tcc/inventory/${op}`, { body, admin: true });

/** The contract's problem+json shape, with the HTTP status mirrored in the body and no stack trace. */
function expectProblem(res: Answer, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String), code });
  const text = JSON.stringify(res.body);
  expect(text).not.toMatch(/"stack"|\n\s+at |\(\/[^)]*:\d+:\d+\)|node:internal/);
}

function expectValidation(res: Answer, field?: RegExp): void {
  expectProblem(res, 400, 'VALIDATION_FAILED');
  expect(Array.isArray(res.body.errors)).toBe(true);
  expect(res.body.errors.length).toBeGreaterThan(0);
  for (const e of res.body.errors) expect(e).toEqual({ field: expect.any(String), message: expect.any(String) });
  if (field) expect(res.body.errors.map((e: { field: string }) => e.field)).toContainEqual(expect.stringMatching(field));
}

async function stock(s: string): Promise<{ onHand: number; reserved: number; available: number }> {
  const res = await h.api.get(`/inventory/${s}`);
  expect(res.status).toBe(200);
  return { onHand: res.body.onHand, reserved: res.body.reserved, available: res.body.available };
}

async function newSku(onHand: number, currency = 'USD', prefixName = 'E'): Promise<string> {
  const s = sku(prefixName);
  expect((await h.api.putSku(s, onHand, 1000, currency)).status).toBe(200);
  return s;
}

describe('UNAUTHORIZED on admin and participant routes', () => {
  const routes: [string, string, unknown][] = [
    ['PUT', `/admin/inventory/AUTH-1`, { priceMinor: 1, currency: 'USD', onHand: 1 }],
    ['POST', '/tcc/inventory/try', { transactionId: 't-1', items: [{ sku: 'AUTH-1', quantity: 1 }] }],
    ['POST', '/tcc/inventory/confirm', { transactionId: 't-1' }],
    ['POST', '/tcc/inventory/cancel', { transactionId: 't-1' }],
  ];
  const auths: [string, Record<string, string>][] = [
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer wrong-token' }],
    ['a non-bearer scheme', { authorization: 'Basic dGVzdC1hZG1pbi10b2tlbg==' }],
  ];

  it.each(routes.flatMap(([m, p, b]) => auths.map(([label, h]) => [m, p, label, h, b] as const)))('%s %s with %s is 401', async (method, path, _label, headers, body) => {
    // Each from an address of its own: the wrong credentials here must not throttle the file's others.
    expectProblem(await client(h.svc.url, { from: 'anywhere' }).send(method, path, { body, headers }), 401, 'UNAUTHORIZED');
  });

  it.each(routes)('wins over a malformed or invalid body on %s %s', async (method, path) => {
    expectProblem(await h.api.send(method, path, { raw: '{"not json' }), 401, 'UNAUTHORIZED');
    expectProblem(await client(h.svc.url, { from: 'anywhere' }).send(method, path, { body: [1, 2], headers: { authorization: 'Bearer nope' } }), 401, 'UNAUTHORIZED');
  });

  it('creates nothing when refused', async () => {
    const s = sku('AUTH');
    expectProblem(await h.api.send('PUT', `/admin/inventory/${s}`, { body: { priceMinor: 1, currency: 'USD', onHand: 5 } }), 401, 'UNAUTHORIZED');
    expectProblem(await h.api.get(`/inventory/${s}`), 404, 'NOT_FOUND');
  });
});

describe('body parsing', () => {
  const big = 'x'.repeat(70 * 1024);

  it('answers PAYLOAD_TOO_LARGE for a body over 64 KiB', async () => {
    expectProblem(await h.api.order(randomUUID(), orderBody([{ sku: 'A', quantity: 1 }], { customerId: big })), 413, 'PAYLOAD_TOO_LARGE');
    expectProblem(await h.api.admin('PUT', `/admin/inventory/${sku()}`, { name: big, priceMinor: 1, currency: 'USD', onHand: 1 }), 413, 'PAYLOAD_TOO_LARGE');
    expectProblem(await tcc('try', { transactionId: 't', items: [{ sku: big, quantity: 1 }] }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers MALFORMED_JSON for a body that is not JSON', async () => {
    const key = { 'idempotency-key': randomUUID() };
    expectProblem(await h.api.send('POST', '/orders', { raw: '{"customerId":', headers: key }), 400, 'MALFORMED_JSON');
    expectProblem(await h.api.send('PUT', `/admin/inventory/${sku()}`, { raw: 'nope', admin: true }), 400, 'MALFORMED_JSON');
    expectProblem(await h.api.send('POST', '/tcc/inventory/try', { raw: '{', admin: true }), 400, 'MALFORMED_JSON');
  });
});

describe('VALIDATION_FAILED', () => {
  let s: string;
  beforeAll(async () => {
    s = await newSku(100);
  });
  const line = () => ({ sku: s, quantity: 1 });
  const many = (n: number) => Array.from({ length: n }, (_, i) => ({ sku: `V-${i}`, quantity: 1 }));

  it.each([
    ['no Idempotency-Key', undefined, /idempotency/i],
    ['an empty Idempotency-Key', '', /idempotency/i],
    ['an Idempotency-Key with bad characters', 'bad key/!', /idempotency/i],
    ['an Idempotency-Key over 255 characters', 'k'.repeat(256), /idempotency/i],
  ])('refuses %s', async (_label, key, field) => {
    const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key };
    expectValidation(await h.api.send('POST', '/orders', { body: orderBody([line()]), headers }), field);
    expect(await stock(s)).toEqual({ onHand: 100, reserved: 0, available: 100 });
  });

  it.each<[string, () => unknown, RegExp | undefined]>([
    ['customerId missing', () => ({ items: [line()] }), /customerId/],
    ['customerId empty', () => orderBody([line()], { customerId: '' }), /customerId/],
    ['customerId over 128', () => orderBody([line()], { customerId: 'c'.repeat(129) }), /customerId/],
    ['customerId not a string', () => orderBody([line()], { customerId: 42 }), /customerId/],
    ['items missing', () => ({ customerId: 'c-1' }), /items/],
    ['items empty', () => orderBody([]), /items/],
    ['over 50 items', () => orderBody(many(51)), /items/],
    ['a duplicate SKU', () => orderBody([line(), { sku: s, quantity: 2 }]), /items/],
    ['quantity 0', () => orderBody([{ sku: s, quantity: 0 }]), /quantity/],
    ['quantity 1001', () => orderBody([{ sku: s, quantity: 1001 }]), /quantity/],
    ['quantity 1.5', () => orderBody([{ sku: s, quantity: 1.5 }]), /quantity/],
    ['quantity "2"', () => orderBody([{ sku: s, quantity: '2' }]), /quantity/],
    ['a malformed sku', () => orderBody([{ sku: 'bad sku!', quantity: 1 }]), /sku/],
    ['an over-long sku', () => orderBody([{ sku: 'S'.repeat(65), quantity: 1 }]), /sku/],
    ['an unknown SKU with an invalid quantity (validation wins)', () => orderBody([{ sku: sku('NOPE'), quantity: 0 }]), /quantity/],
    ['an unknown extra field', () => orderBody([line()], { coupon: 'FREE' }), /coupon/],
    ['an unknown field in a line', () => orderBody([{ ...line(), price: 1 }]), /price/],
    ['a JSON array body', () => [orderBody([line()])], undefined],
    ['a JSON string body', () => 'hello', undefined],
  ])('refuses an order with %s, reserving nothing', async (_label, body, field) => {
    expectValidation(await h.api.order(randomUUID(), body()), field);
    expect(await stock(s)).toEqual({ onHand: 100, reserved: 0, available: 100 });
  });

  it('refuses PUT /admin/inventory with a malformed sku in the path (400, not 404)', async () => {
    const body = { name: 'x', priceMinor: 1, currency: 'USD', onHand: 1 };
    expectValidation(await h.api.admin('PUT', '/admin/inventory/bad!sku', body));
    expectValidation(await h.api.admin('PUT', `/admin/inventory/${'S'.repeat(65)}`, body));
    expectValidation(await h.api.admin('PUT', '/admin/inventory/a%20b', body));
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a negative onHand', { priceMinor: 1, currency: 'USD', onHand: -1 }, /onHand/],
    ['a fractional onHand', { priceMinor: 1, currency: 'USD', onHand: 1.5 }, /onHand/],
    ['a lower-case currency', { priceMinor: 1, currency: 'usd', onHand: 1 }, /currency/],
    ['a 4-letter currency', { priceMinor: 1, currency: 'USDX', onHand: 1 }, /currency/],
    ['a negative price', { priceMinor: -5, currency: 'USD', onHand: 1 }, /priceMinor/],
    ['a missing onHand', { priceMinor: 1, currency: 'USD' }, /onHand/],
    ['an unknown field', { priceMinor: 1, currency: 'USD', onHand: 1, color: 'red' }, /color/],
  ])('refuses PUT /admin/inventory with %s, changing nothing', async (_label, body, field) => {
    expectValidation(await h.api.admin('PUT', `/admin/inventory/${s}`, body), field);
    expect(await stock(s)).toEqual({ onHand: 100, reserved: 0, available: 100 });
  });

  it('refuses participant bodies that fail validation', async () => {
    expectValidation(await tcc('try', { transactionId: 'bad id!', items: [line()] }), /transactionId/);
    expectValidation(await tcc('try', { transactionId: randomUUID(), items: [] }), /items/);
    expectValidation(await tcc('try', { transactionId: randomUUID(), items: [{ sku: s, quantity: 0 }] }), /quantity/);
    expectValidation(await tcc('confirm', {}), /transactionId/);
    expectValidation(await tcc('cancel', { transactionId: 'x'.repeat(129) }), /transactionId/);
    expect(await stock(s)).toEqual({ onHand: 100, reserved: 0, available: 100 });
  });
});

describe('NOT_FOUND', () => {
  const ids = [randomUUID(), 'abc', '..%2Fx', '%27%20OR%201%3D1', '0'];

  it.each(ids)('GET, confirm and cancel /orders/%s are 404', async (id) => {
    expectProblem(await h.api.get(`/orders/${id}`), 404, 'NOT_FOUND');
    expectProblem(await h.api.post(`/orders/${id}/confirm`, {}), 404, 'NOT_FOUND');
    expectProblem(await h.api.post(`/orders/${id}/cancel`), 404, 'NOT_FOUND');
  });

  it('GET /inventory of an unknown or malformed SKU is 404', async () => {
    expectProblem(await h.api.get(`/inventory/${sku('NOPE')}`), 404, 'NOT_FOUND');
    expectProblem(await h.api.get('/inventory/bad!sku'), 404, 'NOT_FOUND');
    expectProblem(await h.api.get(`/inventory/${'S'.repeat(65)}`), 404, 'NOT_FOUND');
    expectProblem(await h.api.get('/inventory/..%2Fx'), 404, 'NOT_FOUND');
  });

  it('an unknown route is 404', async () => {
    expectProblem(await h.api.get('/no-such-route'), 404, 'NOT_FOUND');
    expectProblem(await h.api.post('/orders/x/y/z', {}), 404, 'NOT_FOUND');
  });
});

describe('business errors on the checkout routes', () => {
  it('IDEMPOTENCY_KEY_REUSED: same key, different body, reserves nothing more', async () => {
    const s = await newSku(10);
    const key = randomUUID();
    expect((await h.api.order(key, orderBody([{ sku: s, quantity: 2 }]))).status).toBe(201);
    expectProblem(await h.api.order(key, orderBody([{ sku: s, quantity: 3 }])), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectProblem(await h.api.order(key, orderBody([{ sku: s, quantity: 2 }], { customerId: 'c-2' })), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await stock(s)).toEqual({ onHand: 10, reserved: 2, available: 8 });
  });

  it('UNKNOWN_SKU names the SKU and wins over INSUFFICIENT_STOCK', async () => {
    const short = await newSku(1);
    const missing = sku('NOPE');
    const key = randomUUID();
    const alone = await h.api.order(key, orderBody([{ sku: missing, quantity: 1 }]));
    expectProblem(alone, 422, 'UNKNOWN_SKU');
    expect(alone.body.sku).toBe(missing);
    for (const items of [[{ sku: short, quantity: 5 }, { sku: missing, quantity: 1 }], [{ sku: missing, quantity: 1 }, { sku: short, quantity: 5 }]]) {
      const both = await h.api.order(randomUUID(), orderBody(items));
      expectProblem(both, 422, 'UNKNOWN_SKU');
      expect(both.body.sku).toBe(missing);
    }
    expect(await stock(short)).toEqual({ onHand: 1, reserved: 0, available: 1 });
    // A refused Try does not use up its key.
    expect((await h.api.putSku(missing, 3)).status).toBe(200);
    expect((await h.api.order(key, orderBody([{ sku: missing, quantity: 1 }]))).status).toBe(201);
    expect(await stock(missing)).toEqual({ onHand: 3, reserved: 1, available: 2 });
  });

  it('CURRENCY_MISMATCH reserves nothing', async () => {
    const usd = await newSku(10, 'USD');
    const eur = await newSku(10, 'EUR');
    expectProblem(await h.api.order(randomUUID(), orderBody([{ sku: usd, quantity: 1 }, { sku: eur, quantity: 1 }])), 422, 'CURRENCY_MISMATCH');
    expect(await stock(usd)).toEqual({ onHand: 10, reserved: 0, available: 10 });
    expect(await stock(eur)).toEqual({ onHand: 10, reserved: 0, available: 10 });
  });

  it('INSUFFICIENT_STOCK reserves no line; the same key succeeds after a restock', async () => {
    const [a, b, c] = [await newSku(10), await newSku(10), await newSku(1)];
    const key = randomUUID();
    const body = orderBody([{ sku: a, quantity: 2 }, { sku: c, quantity: 5 }, { sku: b, quantity: 3 }]);
    const refused = await h.api.order(key, body);
    expectProblem(refused, 409, 'INSUFFICIENT_STOCK');
    expect(refused.body).toMatchObject({ sku: c, requested: 5, available: 1 });
    for (const s of [a, b]) expect(await stock(s)).toEqual({ onHand: 10, reserved: 0, available: 10 });
    expect(await stock(c)).toEqual({ onHand: 1, reserved: 0, available: 1 });

    expect((await h.api.putSku(c, 10)).status).toBe(200);
    const ok = await h.api.order(key, body);
    expect(ok.status).toBe(201);
    expect(ok.body.status).toBe('TRY_SUCCESS');
    expect((await stock(a)).reserved).toBe(2);
    expect((await stock(b)).reserved).toBe(3);
    expect((await stock(c)).reserved).toBe(5);
  });

  it('ORDER_CANCELED on confirm of a canceled order, charging nothing', async () => {
    const s = await newSku(5);
    const order = await h.api.order(randomUUID(), orderBody([{ sku: s, quantity: 2 }]));
    expect(order.status).toBe(201);
    expect((await h.api.post(`/orders/${order.body.id}/cancel`)).status).toBe(200);
    expectProblem(await h.api.post(`/orders/${order.body.id}/confirm`, {}), 409, 'ORDER_CANCELED');
    expect(await stock(s)).toEqual({ onHand: 5, reserved: 0, available: 5 });
    expect((await h.api.get(`/orders/${order.body.id}`)).body.status).toBe('CANCELED');
    expect((await h.sim.chargesFor(order.body.id)).succeeded).toBe(0);
  });

  it('ORDER_CONFIRMED on cancel of a confirmed order, releasing nothing', async () => {
    const s = await newSku(5);
    const order = await h.api.order(randomUUID(), orderBody([{ sku: s, quantity: 2 }]));
    expect(order.status).toBe(201);
    const confirmed = await h.api.post(`/orders/${order.body.id}/confirm`, {});
    expect({ status: confirmed.status, order: confirmed.body.status }).toEqual({ status: 200, order: 'CONFIRM_SUCCESS' });
    expectProblem(await h.api.post(`/orders/${order.body.id}/cancel`), 409, 'ORDER_CONFIRMED');
    expect(await stock(s)).toEqual({ onHand: 3, reserved: 0, available: 3 });
    expect(await h.sim.chargesFor(order.body.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 2000 });
  });

  it('STOCK_BELOW_RESERVED keeps onHand', async () => {
    const s = await newSku(5);
    expect((await h.api.order(randomUUID(), orderBody([{ sku: s, quantity: 3 }]))).status).toBe(201);
    expectProblem(await h.api.putSku(s, 2), 409, 'STOCK_BELOW_RESERVED');
    expect(await stock(s)).toEqual({ onHand: 5, reserved: 3, available: 2 });
    expect((await h.api.putSku(s, 3)).status).toBe(200);
    expect(await stock(s)).toEqual({ onHand: 3, reserved: 3, available: 0 });
  });
});

describe('business errors on the participant routes', () => {
  it('TRANSACTION_CANCELED on Try and Confirm after a Cancel', async () => {
    const s = await newSku(5);
    const transactionId = randomUUID();
    expect((await tcc('cancel', { transactionId })).body).toEqual({ status: 'CANCELED' });
    expectProblem(await tcc('try', { transactionId, items: [{ sku: s, quantity: 1 }] }), 409, 'TRANSACTION_CANCELED');
    expectProblem(await tcc('confirm', { transactionId }), 409, 'TRANSACTION_CANCELED');
    expect(await stock(s)).toEqual({ onHand: 5, reserved: 0, available: 5 });
  });

  it('TRANSACTION_CONFIRMED on Cancel after a Confirm', async () => {
    const s = await newSku(5);
    const transactionId = randomUUID();
    expect((await tcc('try', { transactionId, items: [{ sku: s, quantity: 2 }] })).status).toBe(200);
    expect((await tcc('confirm', { transactionId })).status).toBe(200);
    expectProblem(await tcc('cancel', { transactionId }), 409, 'TRANSACTION_CONFIRMED');
    expect(await stock(s)).toEqual({ onHand: 3, reserved: 0, available: 3 });
  });

  it('NO_RESERVATION on Confirm without a Try', async () => {
    expectProblem(await tcc('confirm', { transactionId: randomUUID() }), 409, 'NO_RESERVATION');
  });

  it('UNKNOWN_SKU and INSUFFICIENT_STOCK on Try, reserving nothing; every definite refusal is 409 here (DTM rolls back)', async () => {
    const s = await newSku(2);
    const missing = sku('NOPE');
    const unknown = await tcc('try', { transactionId: randomUUID(), items: [{ sku: s, quantity: 5 }, { sku: missing, quantity: 1 }] });
    expectProblem(unknown, 409, 'UNKNOWN_SKU');
    expect(unknown.body.sku).toBe(missing);
    const short = await tcc('try', { transactionId: randomUUID(), items: [{ sku: s, quantity: 5 }] });
    expectProblem(short, 409, 'INSUFFICIENT_STOCK');
    expect(short.body).toMatchObject({ sku: s, requested: 5, available: 2 });
    expect(await stock(s)).toEqual({ onHand: 2, reserved: 0, available: 2 });
  });
});

it('leaves the stock invariant intact', async () => {
  const [row] = await h.db.query<{ n: string }>('SELECT count(*)::text AS n FROM stock WHERE reserved < 0 OR reserved > on_hand');
  expect(row.n).toBe('0');
});
