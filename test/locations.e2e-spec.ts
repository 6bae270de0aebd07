import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { uniqueSku, waitForStatus } from './support/orders.js';
import { expectProblem, expectValidation, fingerprint } from './support/problem.js';
import { startReceiver } from './support/receiver.js';
import { stockDrift } from './support/stock.js';

/**
 * Stock locations over HTTP (API.md, "Stock locations and the inventory ledger"): the locations
 * themselves, stock per location with compare-and-set, the inventory JSON, and an order's
 * allocations everywhere its stock shows — the order JSON, a replay, the timeline, webhooks, the
 * admin list of outside branches — sold exactly by Confirm, released exactly by Cancel, expiry and
 * force-cancel.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });
const tag = randomUUID().slice(0, 6);
const loc = { north: `north-${tag}`, store: `store-${tag}`, shut: `shut-${tag}` };

beforeAll(async () => {
  expect((await h.api.admin('PUT', `/admin/locations/${loc.north}`, { name: 'North warehouse', priority: 10, active: true })).status).toBe(200);
  expect((await h.api.admin('PUT', `/admin/locations/${loc.store}`, { name: 'Store', priority: 20, active: true })).status).toBe(200);
  expect((await h.api.admin('PUT', `/admin/locations/${loc.shut}`, { name: 'Closed', priority: 5, active: false })).status).toBe(200);
});

afterEach(async () => {
  expect(await stockDrift(h.db)).toEqual([]);
});

const setStock = (sku: string, locationId: string, body: Record<string, unknown>) => h.api.admin('PUT', `/admin/inventory/${sku}/locations/${locationId}`, body);

/** A SKU with stock at default (d), north (n), store (s) and the closed location (c). */
async function stocked(d: number, n: number, s: number, c = 0): Promise<string> {
  const sku = uniqueSku('LOC');
  expect((await h.api.putSku(sku, d, 500)).status).toBe(200);
  for (const [id, onHand] of [[loc.north, n], [loc.store, s], [loc.shut, c]] as const) expect((await setStock(sku, id, { onHand })).status).toBe(200);
  return sku;
}

describe('locations', () => {
  it('default always exists; PUT creates and replaces; GET lists by priority, then id', async () => {
    const list = (await h.api.admin('GET', '/admin/locations')).body.data;
    expect(list[0]).toEqual({ id: 'default', name: 'Default', priority: 0, active: true });
    const mine = list.filter((l: { id: string }) => Object.values(loc).includes(l.id));
    expect(mine.map((l: { id: string }) => l.id)).toEqual([loc.shut, loc.north, loc.store]);
    const replaced = await h.api.admin('PUT', `/admin/locations/${loc.store}`, { name: 'Store Lyon', priority: 20, active: true });
    expect(replaced.body).toEqual({ id: loc.store, name: 'Store Lyon', priority: 20, active: true });
  });

  it('refuses a malformed id (400) and a bad body, changing nothing', async () => {
    const before = await fingerprint(h.db);
    expectValidation(await h.api.admin('PUT', '/admin/locations/bad%20id', { name: 'x', priority: 1, active: true }), /id/);
    expectValidation(await h.api.admin('PUT', '/admin/locations/x', { name: '', priority: 1, active: true }), /name/);
    expectValidation(await h.api.admin('PUT', '/admin/locations/x', { name: 'x', priority: -1, active: true }), /priority/);
    expectValidation(await h.api.admin('PUT', '/admin/locations/x', { name: 'x', priority: 1, active: 'yes' }), /active/);
    expectValidation(await h.api.admin('PUT', '/admin/locations/x', { name: 'x', priority: 1, active: true, extra: 1 }), /extra/);
    expect(await fingerprint(h.db)).toEqual(before);
  });
});

describe('stock per location', () => {
  it('the inventory JSON: every location with a stock row, in location order, sums over them; inactive offers nothing', async () => {
    const sku = await stocked(2, 5, 3, 9);
    expect((await setStock(sku, loc.store, { onHand: 3, safetyStock: 1 })).status).toBe(200);
    const inv = (await h.api.get(`/inventory/${sku}`)).body;
    expect(inv).toEqual({
      sku,
      name: sku,
      priceMinor: 500,
      currency: 'USD',
      onHand: 19,
      reserved: 0,
      safetyStock: 1,
      available: 9,
      lowStockThreshold: 0,
      locations: [
        { locationId: 'default', onHand: 2, reserved: 0, safetyStock: 0, available: 2, active: true },
        { locationId: loc.shut, onHand: 9, reserved: 0, safetyStock: 0, available: 0, active: false },
        { locationId: loc.north, onHand: 5, reserved: 0, safetyStock: 0, available: 5, active: true },
        { locationId: loc.store, onHand: 3, reserved: 0, safetyStock: 1, available: 2, active: true },
      ],
    });
  });

  it('compare-and-set: expectedOnHand that no longer matches is STOCK_CHANGED with current, and changes nothing', async () => {
    const sku = await stocked(0, 5, 0);
    const before = await fingerprint(h.db);
    const stale = await setStock(sku, loc.north, { onHand: 9, expectedOnHand: 4 });
    expectProblem(stale, 409, 'STOCK_CHANGED');
    expect(stale.body).toMatchObject({ sku, locationId: loc.north, current: 5 });
    expect(await fingerprint(h.db)).toEqual(before);
    expect((await setStock(sku, loc.north, { onHand: 9, expectedOnHand: 5 })).body.locations).toContainEqual(expect.objectContaining({ locationId: loc.north, onHand: 9 }));
  });

  it('below what is reserved there is STOCK_BELOW_RESERVED naming the location; unknown SKU or location 404', async () => {
    const sku = await stocked(0, 5, 0);
    expect((await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 4 }] })).status).toBe(201);
    const low = await setStock(sku, loc.north, { onHand: 3 });
    expectProblem(low, 409, 'STOCK_BELOW_RESERVED');
    expect(low.body).toMatchObject({ sku, locationId: loc.north });
    expectProblem(await setStock(sku, `nowhere-${tag}`, { onHand: 3 }), 404, 'NOT_FOUND');
    expectProblem(await setStock(`NOPE-${tag}`, loc.north, { onHand: 3 }), 404, 'NOT_FOUND');
    expectProblem(await setStock('bad%20sku', loc.north, { onHand: 3 }), 404, 'NOT_FOUND');
    // PUT /admin/inventory/{sku} keeps working on default: its onHand is default's.
    expectProblem(await h.api.putSku(sku, -1), 400, 'VALIDATION_FAILED');
    expect((await h.api.putSku(sku, 7, 500)).body.locations[0]).toMatchObject({ locationId: 'default', onHand: 7 });
  });
});

describe('allocation over HTTP', () => {
  it('splits a line in priority order, skipping an inactive location and never touching safety stock', async () => {
    const sku = await stocked(1, 2, 10, 50);
    await setStock(sku, loc.store, { onHand: 10, safetyStock: 8 });
    const res = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 5 }] });
    expect(res.status).toBe(201);
    expect(res.body.items[0].allocations).toEqual([
      { locationId: 'default', quantity: 1 },
      { locationId: loc.north, quantity: 2 },
      { locationId: loc.store, quantity: 2 },
    ]);
    const refused = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 1 }] });
    expectProblem(refused, 409, 'INSUFFICIENT_STOCK');
    expect(refused.body).toMatchObject({ sku, requested: 1, available: 0 });
  });

  it('locationIds: click and collect at one store; INSUFFICIENT_STOCK counts only the allowed; an unknown one is UNKNOWN_LOCATION (409 on /tcc)', async () => {
    const sku = await stocked(10, 10, 2);
    const collect = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 2 }], locationIds: [loc.store] });
    expect(collect.body.items[0].allocations).toEqual([{ locationId: loc.store, quantity: 2 }]);
    const short = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 1 }], locationIds: [loc.store, loc.shut] });
    expectProblem(short, 409, 'INSUFFICIENT_STOCK');
    expect(short.body).toMatchObject({ sku, requested: 1, available: 0 });
    const before = await fingerprint(h.db);
    const unknown = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 1 }], locationIds: [`gone-${tag}`] });
    expectProblem(unknown, 422, 'UNKNOWN_LOCATION');
    expect(unknown.body.locationId).toBe(`gone-${tag}`);
    const branch = await h.api.send('POST', '/tcc/inventory/try', { body: { transactionId: `t-${tag}`, items: [{ sku, quantity: 1 }], locationIds: [`gone-${tag}`] }, admin: true });
    expectProblem(branch, 409, 'UNKNOWN_LOCATION');
    expect(await fingerprint(h.db)).toEqual(before);
    expectValidation(await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 1 }], locationIds: [loc.store, loc.store] }), /locationIds/);
    expectValidation(await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 1 }], locationIds: [] }), /locationIds/);
  });

  it('more stock over its locations than a 32-bit integer holds (the most a location holds, at three): Trys, click and collect and the inventory answer as ever', async () => {
    const sku = await stocked(1_000_000_000, 1_000_000_000, 1_000_000_000);
    const any = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 3 }] });
    expect(any.status).toBe(201);
    const collect = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 1 }], locationIds: [loc.store] });
    expect(collect.status).toBe(201);
    expect(collect.body.items[0].allocations).toEqual([{ locationId: loc.store, quantity: 1 }]);
    const inventory = await h.api.get(`/inventory/${sku}`);
    expect(inventory.status).toBe(200);
    expect(inventory.body).toMatchObject({ onHand: 3_000_000_000, reserved: 4, available: 2_999_999_996 });
  });

  it('a replay answers the same allocations; the timeline and the order.reserved webhook carry them', async () => {
    const sku = await stocked(1, 5, 0);
    const receiver = await startReceiver();
    try {
      expect((await h.api.admin('PUT', `/admin/webhooks/loc-${tag}`, { url: receiver.url, events: ['order.reserved', 'order.confirmed'], secret: receiver.secret })).status).toBe(200);
      const key = randomUUID();
      const body = { customerId: 'c', items: [{ sku, quantity: 3 }] };
      const first = await h.api.order(key, body);
      const replay = await h.api.order(key, body);
      const expected = [{ locationId: 'default', quantity: 1 }, { locationId: loc.north, quantity: 2 }];
      expect(first.body.items[0].allocations).toEqual(expected);
      expect(replay.body.items[0].allocations).toEqual(expected);
      expect((await h.api.get(`/inventory/${sku}`)).body.reserved).toBe(3);
      const events = (await h.api.admin('GET', `/admin/orders/${first.body.id}/events`)).body.data;
      expect(events[0].data.allocations).toEqual([
        { sku, locationId: 'default', quantity: 1 },
        { sku, locationId: loc.north, quantity: 2 },
      ]);
      await waitForWebhook(() => receiver.unique().find((r) => r.event.type === 'order.reserved' && r.event.data.order.id === first.body.id));
      const reserved = receiver.unique().find((r) => r.event.type === 'order.reserved' && r.event.data.order.id === first.body.id)!;
      expect(reserved.event.data.order.items[0].allocations).toEqual(expected);
    } finally {
      await h.api.admin('DELETE', `/admin/webhooks/loc-${tag}`);
      await receiver.close();
    }
  });

  it('Confirm sells exactly the allocations (a sale movement each); Cancel and force-cancel release exactly them', async () => {
    const sku = await stocked(1, 3, 10);
    const order = async (quantity: number) => (await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity }] })).body;
    const sold = await order(3); // default 1 + north 2
    const canceled = await order(2); // north 1 + store 1
    const forced = await order(1); // store 1
    expect((await h.api.post(`/orders/${sold.id}/confirm`, { paymentToken: 'tok_ok' })).status).toBe(200);
    expect((await h.api.post(`/orders/${canceled.id}/cancel`)).status).toBe(200);
    expect((await h.api.admin('POST', `/admin/orders/${forced.id}/force-cancel`, { reason: 'fraud' })).status).toBe(200);
    const locations = (await h.api.get(`/inventory/${sku}`)).body.locations;
    expect(locations.map((l: any) => [l.locationId, l.onHand, l.reserved])).toEqual([
      ['default', 0, 0],
      [loc.shut, 0, 0],
      [loc.north, 1, 0],
      [loc.store, 10, 0],
    ]);
    const sales = await h.db.query(`SELECT location_id, delta, reference, actor FROM stock_movements WHERE sku = $1 AND kind = 'sale' ORDER BY id`, [sku]);
    expect(sales).toEqual([
      { location_id: 'default', delta: -1, reference: sold.id, actor: 'system' },
      { location_id: loc.north, delta: -2, reference: sold.id, actor: 'system' },
    ]);
  });

  it('an outside branch is allocated like a checkout Try, listed with its allocations, sold and released where it holds', async () => {
    const sku = await stocked(0, 1, 5);
    const tx = `branch-${tag}`;
    expect((await h.api.send('POST', '/tcc/inventory/try', { body: { transactionId: tx, items: [{ sku, quantity: 3 }] }, admin: true })).status).toBe(200);
    const listed = (await h.api.admin('GET', '/admin/participant/transactions?status=RESERVED')).body.data.find((b: any) => b.transactionId === tx);
    expect(listed.items).toEqual([{ sku, quantity: 3, allocations: [{ locationId: loc.north, quantity: 1 }, { locationId: loc.store, quantity: 2 }] }]);
    expect((await h.api.send('POST', '/tcc/inventory/confirm', { body: { transactionId: tx }, admin: true })).status).toBe(200);
    const locations = (await h.api.get(`/inventory/${sku}`)).body.locations;
    expect(locations.filter((l: any) => l.onHand > 0 || l.locationId === loc.north).map((l: any) => [l.locationId, l.onHand, l.reserved])).toEqual([
      [loc.north, 0, 0],
      [loc.store, 3, 0],
    ]);
    const sales = await h.db.query(`SELECT location_id, delta, reference FROM stock_movements WHERE sku = $1 AND kind = 'sale' ORDER BY id`, [sku]);
    expect(sales).toEqual([
      { location_id: loc.north, delta: -1, reference: tx },
      { location_id: loc.store, delta: -2, reference: tx },
    ]);
  });

  it('an inactive location is allocated nothing new; what it already holds stays until confirmed', async () => {
    const sku = await stocked(0, 4, 0);
    const held = (await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 2 }] })).body;
    expect(held.items[0].allocations).toEqual([{ locationId: loc.north, quantity: 2 }]);
    await h.api.admin('PUT', `/admin/locations/${loc.north}`, { name: 'North warehouse', priority: 10, active: false });
    try {
      expectProblem(await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity: 1 }] }), 409, 'INSUFFICIENT_STOCK');
      expect((await h.api.post(`/orders/${held.id}/confirm`, { paymentToken: 'tok_ok' })).status).toBe(200);
      await waitForStatus(h.api, held.id, ['CONFIRM_SUCCESS']);
      expect((await h.api.get(`/inventory/${sku}`)).body.locations).toContainEqual({ locationId: loc.north, onHand: 2, reserved: 0, safetyStock: 0, available: 0, active: false });
    } finally {
      await h.api.admin('PUT', `/admin/locations/${loc.north}`, { name: 'North warehouse', priority: 10, active: true });
    }
  });
});

async function waitForWebhook(found: () => unknown): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!found()) {
    if (Date.now() > deadline) throw new Error('webhook not delivered in 15 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}
