import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { uniqueSku, waitForStatus } from './support/orders.js';
import { expectProblem, expectValidation } from './support/problem.js';
import { stockDrift } from './support/stock.js';

/**
 * The inventory ledger over HTTP (API.md, "Ledger" and "Stock per location"): a SKU's movements,
 * newest first, filtered and paged with cursors only the service issues, each naming who made it
 * (admin, a console operator, the system); adjustments with their reasons, refusals that change
 * nothing, Idempotency-Key replays, and concurrent adjustments and sales that lose no update.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });
const tag = randomUUID().slice(0, 6);
const store = `store-${tag}`;

beforeAll(async () => {
  expect((await h.api.admin('PUT', `/admin/locations/${store}`, { name: 'Store', priority: 10, active: true })).status).toBe(200);
});

afterEach(async () => {
  expect(await stockDrift(h.db)).toEqual([]);
});

const adjust = (sku: string, body: Record<string, unknown>, key?: string, headers: Record<string, string> = {}) =>
  h.api.send('POST', `/admin/inventory/${sku}/adjustments`, { body, admin: !headers.cookie, headers: { ...(key ? { 'idempotency-key': key } : {}), ...headers } });
const movements = (sku: string, query = '') => h.api.get(`/admin/inventory/${sku}/movements${query}`, true);

/** What a refusal must leave as it was: every stock row and the ledger. */
async function stockPrint(): Promise<unknown> {
  return h.db.query(`SELECT (SELECT md5(string_agg(row_to_json(s)::text, ',' ORDER BY sku, location_id)) FROM stock s) AS stock,
                            (SELECT count(*) || ':' || coalesce(max(id), 0) FROM stock_movements) AS ledger,
                            (SELECT md5(string_agg(row_to_json(k)::text, ',' ORDER BY sku)) FROM skus k) AS skus`);
}

async function consoleSession(name: string): Promise<{ cookie: string; 'x-csrf-token': string }> {
  const res = await fetch(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: ADMIN_TOKEN, name }) });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0], 'x-csrf-token': body.csrfToken };
}

describe('movements', () => {
  it('every change of on hand is one movement: set, adjustment, sale; newest first, with actor and operator', async () => {
    const sku = uniqueSku('LED');
    expect((await h.api.putSku(sku, 10, 700)).status).toBe(200);
    const session = await consoleSession('Ana');
    const adjusted = await adjust(sku, { delta: 5, reason: 'received', reference: 'PO-1' }, undefined, session);
    expect(adjusted.status).toBe(201);
    const order = await h.api.order(randomUUID(), { customerId: 'c-led', items: [{ sku, quantity: 3 }] });
    expect(order.status).toBe(201);
    expect((await h.api.post(`/orders/${order.body.id}/confirm`, { paymentToken: 'tok_ok' })).status).toBe(200);
    await waitForStatus(h.api, order.body.id, ['CONFIRM_SUCCESS']);
    // A set to the same on hand is no movement.
    expect((await h.api.admin('PUT', `/admin/inventory/${sku}/locations/default`, { onHand: 12 })).status).toBe(200);

    const res = await movements(sku);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    const base = { sku, locationId: 'default' };
    expect(res.body.data).toEqual([
      { ...base, id: expect.any(String), at: expect.any(String), kind: 'sale', delta: -3, onHandAfter: 12, reason: null, reference: order.body.id, actor: 'system', operator: null, principal: { type: 'system', id: null, name: null } },
      { ...base, id: expect.any(String), at: expect.any(String), kind: 'adjustment', delta: 5, onHandAfter: 15, reason: 'received', reference: 'PO-1', actor: 'console', operator: 'Ana', principal: { type: 'root', id: null, name: null } },
      { ...base, id: expect.any(String), at: expect.any(String), kind: 'set', delta: 10, onHandAfter: 10, reason: null, reference: null, actor: 'admin', operator: null, principal: { type: 'root', id: null, name: null } },
    ]);
    const ids = res.body.data.map((m: { id: string }) => BigInt(m.id));
    expect(ids[0] > ids[1] && ids[1] > ids[2]).toBe(true);
    for (const m of res.body.data) expect(new Date(m.at).toISOString()).toBe(m.at);
    expect(adjusted.body.movement).toEqual(res.body.data[1]);
  });

  it('filters by location and kind, and pages newest first with signed cursors', async () => {
    const sku = uniqueSku('LEDP');
    expect((await h.api.putSku(sku, 1)).status).toBe(200);
    for (let i = 1; i <= 5; i++) expect((await adjust(sku, { delta: i, reason: 'received', locationId: store })).status).toBe(201);
    expect((await adjust(sku, { delta: 2, reason: 'correction' })).status).toBe(201);

    const atStore = await movements(sku, `?locationId=${store}`);
    expect(atStore.body.data.map((m: { delta: number }) => m.delta)).toEqual([5, 4, 3, 2, 1]);
    expect((await movements(sku, '?kind=set')).body.data.map((m: { delta: number }) => m.delta)).toEqual([1]);
    expect((await movements(sku, `?kind=adjustment&locationId=default`)).body.data.map((m: { delta: number }) => m.delta)).toEqual([2]);
    expect((await movements(sku, '?locationId=nowhere')).body).toEqual({ data: [], nextCursor: null });

    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: { data: { delta: number }[]; nextCursor: string | null } } = await movements(sku, `?locationId=${store}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((m) => m.delta));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([5, 4, 3, 2, 1]);
    expect(pages).toBe(3);

    // A cursor the service did not issue, or one of another list, is VALIDATION_FAILED.
    const first = await movements(sku, '?limit=1');
    const issued: string = first.body.nextCursor;
    const [payload, sig] = issued.split('.');
    const forged = `${Buffer.from(JSON.stringify(['1'])).toString('base64url')}.${sig}`;
    expectValidation(await movements(sku, `?cursor=${encodeURIComponent(forged)}`), /^cursor$/);
    expectValidation(await movements(sku, `?cursor=${payload}`), /^cursor$/);
    // Two orders at least, so the orders list has a next page and its cursor to try here.
    for (let i = 0; i < 2; i++) expect((await h.api.order(randomUUID(), { customerId: 'c-led-cursor', items: [{ sku, quantity: 1 }] })).status).toBe(201);
    const orders = await h.api.get('/admin/orders?limit=1', true);
    expect(typeof orders.body.nextCursor).toBe('string');
    expectValidation(await movements(sku, `?cursor=${encodeURIComponent(orders.body.nextCursor)}`), /^cursor$/);
    const catalogue = await h.api.get('/admin/inventory?limit=1', true);
    expectValidation(await movements(sku, `?cursor=${encodeURIComponent(catalogue.body.nextCursor)}`), /^cursor$/);
  });

  it('refuses a bad query (400) and an unknown or malformed SKU (404), and needs the admin token', async () => {
    const sku = uniqueSku('LEDQ');
    expect((await h.api.putSku(sku, 1)).status).toBe(200);
    for (const q of ['?limit=0', '?limit=1001', '?limit=x', '?kind=theft', '?locationId=bad%20id', '?extra=1', '?cursor=']) expectValidation(await movements(sku, q));
    expectProblem(await movements(uniqueSku('NOPE')), 404, 'NOT_FOUND');
    expectProblem(await movements('bad%20sku'), 404, 'NOT_FOUND');
    expectProblem(await h.api.get(`/admin/inventory/${sku}/movements`), 401, 'UNAUTHORIZED');
  });
});

describe('adjustments', () => {
  it('adds the delta at a location (default when none is named): 201 with the movement and the inventory', async () => {
    const sku = uniqueSku('ADJ');
    expect((await h.api.putSku(sku, 4)).status).toBe(200);
    const res = await adjust(sku, { delta: 7, reason: 'received', locationId: store, reference: 'ASN-77' });
    expect(res.status).toBe(201);
    expect(res.body.movement).toMatchObject({ sku, locationId: store, kind: 'adjustment', delta: 7, onHandAfter: 7, reason: 'received', reference: 'ASN-77', actor: 'admin', operator: null });
    expect(res.body.inventory).toMatchObject({ sku, onHand: 11, available: 11 });
    expect(res.body.inventory.locations).toEqual([
      { locationId: 'default', onHand: 4, reserved: 0, safetyStock: 0, available: 4, active: true },
      { locationId: store, onHand: 7, reserved: 0, safetyStock: 0, available: 7, active: true },
    ]);
    const down = await adjust(sku, { delta: -4, reason: 'damaged' });
    expect(down.status).toBe(201);
    expect(down.body.movement).toMatchObject({ locationId: 'default', delta: -4, onHandAfter: 0, reason: 'damaged', reference: null });
    expect((await h.api.get(`/inventory/${sku}`)).body).toEqual(down.body.inventory);
  });

  it('below what is reserved there, or below 0, is 409 STOCK_BELOW_RESERVED with sku and locationId; nothing changes', async () => {
    const sku = uniqueSku('ADJR');
    expect((await h.api.putSku(sku, 5)).status).toBe(200);
    const order = await h.api.order(randomUUID(), { customerId: 'c-adj', items: [{ sku, quantity: 3 }] });
    expect(order.status).toBe(201);
    const before = await stockPrint();
    const below = await adjust(sku, { delta: -3, reason: 'lost' });
    expectProblem(below, 409, 'STOCK_BELOW_RESERVED');
    expect(below.body).toMatchObject({ sku, locationId: 'default' });
    const negative = await adjust(sku, { delta: -1, reason: 'lost', locationId: store });
    expectProblem(negative, 409, 'STOCK_BELOW_RESERVED');
    expect(negative.body).toMatchObject({ sku, locationId: store });
    expect(await stockPrint()).toEqual(before);
    expect((await adjust(sku, { delta: -2, reason: 'lost' })).status).toBe(201);
    expect((await h.api.post(`/orders/${order.body.id}/cancel`)).status).toBe(200);
  });

  it('above the most a location holds (1000000000) is 400 VALIDATION_FAILED naming delta; nothing changes', async () => {
    const sku = uniqueSku('ADJM');
    expect((await h.api.putSku(sku, 999_999_990)).status).toBe(200);
    const before = await stockPrint();
    const over = await adjust(sku, { delta: 11, reason: 'received' });
    expectProblem(over, 400, 'VALIDATION_FAILED');
    expect(over.body.errors).toEqual([{ field: 'delta', message: expect.stringMatching(/above 1000000000/) }]);
    expect(await stockPrint()).toEqual(before);
    expect((await adjust(sku, { delta: 10, reason: 'received' })).status).toBe(201);
    expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ onHand: 1_000_000_000 });
  });

  it('404 for an unknown SKU or location; 400 for a bad body or key; 401 without credentials — each changing nothing', async () => {
    const sku = uniqueSku('ADJV');
    expect((await h.api.putSku(sku, 5)).status).toBe(200);
    const before = await stockPrint();
    expectProblem(await adjust(uniqueSku('NOPE'), { delta: 1, reason: 'received' }), 404, 'NOT_FOUND');
    expectProblem(await adjust(sku, { delta: 1, reason: 'received', locationId: 'nowhere' }), 404, 'NOT_FOUND');
    expectProblem(await adjust('bad%20sku', { delta: 1, reason: 'received' }), 404, 'NOT_FOUND');
    expectValidation(await adjust(sku, { delta: 0, reason: 'received' }), /^delta$/);
    expectValidation(await adjust(sku, { delta: 1_000_000_001, reason: 'received' }), /^delta$/);
    expectValidation(await adjust(sku, { delta: -1_000_000_001, reason: 'received' }), /^delta$/);
    expectValidation(await adjust(sku, { delta: 1.5, reason: 'received' }), /^delta$/);
    expectValidation(await adjust(sku, { delta: '1', reason: 'received' }), /^delta$/);
    expectValidation(await adjust(sku, { delta: 1, reason: 'theft' }), /^reason$/);
    expectValidation(await adjust(sku, { delta: 1 }), /^reason$/);
    expectValidation(await adjust(sku, { delta: 1, reason: 'received', reference: '' }), /^reference$/);
    expectValidation(await adjust(sku, { delta: 1, reason: 'received', reference: 'x'.repeat(201) }), /^reference$/);
    expectValidation(await adjust(sku, { delta: 1, reason: 'received', locationId: 'bad id' }), /^locationId$/);
    expectValidation(await adjust(sku, { delta: 1, reason: 'received', extra: true }), /^extra$/);
    expectValidation(await adjust(sku, { delta: 1, reason: 'received' }, 'bad key!'), /^Idempotency-Key$/);
    expectProblem(await h.api.send('POST', `/admin/inventory/${sku}/adjustments`, { body: { delta: 1, reason: 'received' } }), 401, 'UNAUTHORIZED');
    expect(await stockPrint()).toEqual(before);
  });

  it('an Idempotency-Key: the same body answers the first movement (201) and changes nothing more; another body is 422', async () => {
    const sku = uniqueSku('ADJK');
    expect((await h.api.putSku(sku, 5)).status).toBe(200);
    const key = `adj-${randomUUID()}`;
    const first = await adjust(sku, { delta: 3, reason: 'returned', reference: 'RMA-9' }, key);
    expect(first.status).toBe(201);
    const before = await stockPrint();
    // Equal as JSON (key order aside, and default named or not).
    const again = await adjust(sku, { reference: 'RMA-9', reason: 'returned', delta: 3, locationId: 'default' }, key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await stockPrint()).toEqual(before);
    const other = await adjust(sku, { delta: 4, reason: 'returned', reference: 'RMA-9' }, key);
    expectProblem(other, 422, 'IDEMPOTENCY_KEY_REUSED');
    // The same key for another SKU is another request.
    const sku2 = uniqueSku('ADJK');
    expect((await h.api.putSku(sku2, 5)).status).toBe(200);
    expectProblem(await adjust(sku2, { delta: 3, reason: 'returned', reference: 'RMA-9' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect((await movements(sku)).body.data.filter((m: { kind: string }) => m.kind === 'adjustment')).toHaveLength(1);

    // The stock moves on (a reservation, an adjustment without a key): a replay still answers the
    // first result, the inventory as the first answer gave it, and changes nothing.
    expect((await h.api.order(randomUUID(), { customerId: 'c-adjk', items: [{ sku, quantity: 2 }] })).status).toBe(201);
    expect((await adjust(sku, { delta: 5, reason: 'received' })).status).toBe(201);
    const moved = await stockPrint();
    const later = await adjust(sku, { delta: 3, reason: 'returned', reference: 'RMA-9' }, key);
    expect(later.status).toBe(201);
    expect(later.body).toEqual(first.body);
    expect(first.body.inventory).toMatchObject({ onHand: 8, reserved: 0 });
    expect(await stockPrint()).toEqual(moved);

    // Sent many times at once: one movement.
    const key2 = `adj-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 12 }, () => adjust(sku, { delta: 1, reason: 'cycle_count' }, key2)));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
    expect(new Set(answers.map((a) => a.body.movement.id)).size).toBe(1);
    expect(new Set(answers.map((a) => JSON.stringify(a.body.inventory))).size).toBe(1);
    expect((await h.api.get(`/inventory/${sku}`)).body.onHand).toBe(14);
  });

  it('concurrent adjustments and sales never lose an update', async () => {
    const sku = uniqueSku('ADJC');
    expect((await h.api.putSku(sku, 200)).status).toBe(200);
    const sales = Array.from({ length: 30 }, async () => {
      const order = await h.api.order(randomUUID(), { customerId: `c-${randomUUID().slice(0, 6)}`, items: [{ sku, quantity: 2 }] });
      expect(order.status).toBe(201);
      const confirmed = await h.api.post(`/orders/${order.body.id}/confirm`, { paymentToken: 'tok_ok' });
      expect(confirmed.status).toBe(200);
    });
    const ups = Array.from({ length: 40 }, async (_, i) => expect((await adjust(sku, { delta: i % 2 ? 3 : -1, reason: 'correction' })).status).toBe(201));
    await Promise.all([...sales, ...ups]);
    // 200 − 30×2 + 20×3 − 20×1
    const inv = (await h.api.get(`/inventory/${sku}`)).body;
    expect(inv).toMatchObject({ onHand: 180, reserved: 0 });
    const [sum] = await h.db.query<{ total: number; n: number }>(`SELECT sum(delta)::int AS total, count(*)::int AS n FROM stock_movements WHERE sku = $1`, [sku]);
    expect(sum).toEqual({ total: 180, n: 71 });
  });
});
