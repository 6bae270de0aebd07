import { randomUUID } from 'node:crypto';
import { waitFor } from './support/http.js';
import { useHarness } from './support/harness.js';
import { expectValidation } from './support/problem.js';
import { startReceiver, Receiver } from './support/receiver.js';
import { stockDrift } from './support/stock.js';

/**
 * Low stock (API.md, "Low stock"): inventory.low_stock through the outbox once per fall to or below
 * the threshold — by Trys (many at once, batched), an adjustment, a set, an import, a SKU created
 * or given a threshold already at or below it, a location switched off — and again only after
 * available rose above it (a location switched on, or a repair freeing a leaked reservation,
 * included); the gauge tcc_inventory_low_stock_skus from the database.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });
const tag = randomUUID().slice(0, 6);
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  expect((await h.api.admin('PUT', `/admin/webhooks/low-${tag}`, { url: receiver.url, events: ['inventory.low_stock'], secret: receiver.secret })).status).toBe(200);
});
afterAll(async () => receiver?.close());
afterEach(async () => {
  expect(await stockDrift(h.db)).toEqual([]);
});

/** The low-stock events recorded for a SKU (the outbox: one delivery per event for the one endpoint). */
async function events(sku: string): Promise<{ available: number }[]> {
  const rows = await h.db.query<{ payload: string }>(`SELECT payload FROM webhook_deliveries WHERE type = 'inventory.low_stock' AND sku = $1 ORDER BY created_at, id`, [sku]);
  return rows.map((r) => JSON.parse(r.payload).data.inventory);
}

const putSku = (sku: string, onHand: number, lowStockThreshold?: number) =>
  h.api.admin('PUT', `/admin/inventory/${sku}`, { name: sku, priceMinor: 100, currency: 'USD', onHand, ...(lowStockThreshold === undefined ? {} : { lowStockThreshold }) });
const tryOrder = (sku: string, quantity: number) => h.api.order(randomUUID(), { customerId: `c-${randomUUID().slice(0, 8)}`, items: [{ sku, quantity }] });

/** Try batches so far and the Trys in them (this process's tcc_batch_size{engine="try"}). */
async function tryBatches(): Promise<{ batches: number; trys: number }> {
  const text = (await h.api.get('/metrics')).body as string;
  const value = (name: string) => Number(new RegExp(`^${name}\\{engine="try"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { batches: value('tcc_batch_size_count'), trys: value('tcc_batch_size_sum') };
}

async function lowStockGauge(): Promise<number> {
  const text = (await h.api.get('/metrics')).body as string;
  return Number(/^tcc_inventory_low_stock_skus (\d+)$/m.exec(text)?.[1]);
}

it('many concurrent Trys that cross the threshold (batched together) announce it once; again only after rising above', async () => {
  const sku = `LOW-${tag}-T`;
  expect((await putSku(sku, 60, 20)).status).toBe(200);
  expect(await events(sku)).toEqual([]);
  const gaugeBefore = await lowStockGauge();
  const batchesBefore = await tryBatches();
  const orders = await Promise.all(Array.from({ length: 50 }, () => tryOrder(sku, 1)));
  expect(orders.map((o) => o.status)).toEqual(Array(50).fill(201));
  // The Trys shared batches: the crossing happened inside a batch of several orders.
  const batchesAfter = await tryBatches();
  expect(batchesAfter.trys - batchesBefore.trys).toBe(50);
  expect(batchesAfter.batches - batchesBefore.batches).toBeLessThan(50);
  const first = await events(sku);
  expect(first).toHaveLength(1);
  expect(first[0]).toMatchObject({ sku, lowStockThreshold: 20 });
  expect(first[0].available).toBeLessThanOrEqual(20);
  expect(await lowStockGauge()).toBe(gaugeBefore + 1);
  // Further falls while low: nothing more.
  expect((await tryOrder(sku, 5)).status).toBe(201);
  expect(await events(sku)).toHaveLength(1);
  // Rising above (cancels release stock), then falling again: a second event.
  await Promise.all(orders.slice(0, 40).map(async (o) => expect((await h.api.post(`/orders/${o.body.id}/cancel`)).status).toBe(200)));
  expect((await h.api.get(`/inventory/${sku}`)).body.available).toBe(45);
  expect(await events(sku)).toHaveLength(1);
  expect(await lowStockGauge()).toBe(gaugeBefore);
  const again = await Promise.all(Array.from({ length: 30 }, () => tryOrder(sku, 1)));
  expect(again.every((o) => o.status === 201)).toBe(true);
  expect(await events(sku)).toHaveLength(2);
  // The receiver gets each event once (at least once, deduped by webhook-id).
  await waitFor('both low-stock events delivered', async () => new Set(receiver.received.filter((r) => (r.event.data as { inventory?: { sku: string } }).inventory?.sku === sku).map((r) => r.id)).size === 2);
});

it('an adjustment, a set and an import cross it too; a SKU created (or given a threshold) at or below it counts as falling', async () => {
  const a = `LOW-${tag}-A`;
  expect((await putSku(a, 10, 5)).status).toBe(200);
  expect((await h.api.admin('POST', `/admin/inventory/${a}/adjustments`, { delta: -5, reason: 'damaged' })).status).toBe(201);
  expect(await events(a)).toHaveLength(1);
  expect((await h.api.admin('PUT', `/admin/inventory/${a}/locations/default`, { onHand: 9 })).status).toBe(200);
  expect((await h.api.admin('PUT', `/admin/inventory/${a}/locations/default`, { onHand: 4 })).status).toBe(200);
  expect(await events(a)).toHaveLength(2);
  expect((await h.api.admin('POST', '/admin/inventory/import', { items: [{ sku: a, onHand: 50 }] })).status).toBe(200);
  expect((await h.api.admin('POST', '/admin/inventory/import', { items: [{ sku: a, onHand: 1 }] })).status).toBe(200);
  expect(await events(a)).toHaveLength(3);

  const born = `LOW-${tag}-B`;
  expect((await putSku(born, 2, 3)).status).toBe(200);
  expect(await events(born)).toHaveLength(1);
  const given = `LOW-${tag}-G`;
  expect((await putSku(given, 2)).status).toBe(200);
  expect(await events(given)).toEqual([]);
  expect((await putSku(given, 2, 2)).status).toBe(200);
  expect(await events(given)).toHaveLength(1);
  const imported = `LOW-${tag}-I`;
  expect((await h.api.admin('POST', '/admin/inventory/import', { items: [{ sku: imported, priceMinor: 1, currency: 'USD', onHand: 1, lowStockThreshold: 4 }] })).status).toBe(200);
  expect(await events(imported)).toHaveLength(1);
  // Threshold 0 is off, and clears the state.
  expect((await putSku(given, 2, 0)).status).toBe(200);
  expect((await putSku(given, 1)).status).toBe(200);
  expect(await events(given)).toHaveLength(1);
  expectValidation(await putSku(given, 1, -1), /lowStockThreshold/);
  expectValidation(await h.api.admin('POST', '/admin/inventory/import', { items: [{ sku: given, lowStockThreshold: 1.5 }] }), /^items\[0\]\.lowStockThreshold$/);
});

it('a consistency repair that frees a leaked reservation clears the flag, so the next fall is announced', async () => {
  const sku = `LOW-${tag}-C`;
  expect((await putSku(sku, 10, 5)).status).toBe(200);
  // A reservation leaked behind the service's back, then a Try that falls to the threshold: announced.
  await h.db.query(`UPDATE stock SET reserved = reserved + 5 WHERE sku = $1 AND location_id = 'default'`, [sku]);
  const held = await tryOrder(sku, 1);
  expect(held.status).toBe(201);
  expect(await events(sku)).toHaveLength(1);
  const repaired = await h.api.admin('POST', '/admin/inventory/consistency/repair', { reason: 'leaked reservation' });
  expect(repaired.status).toBe(200);
  expect(repaired.body.mismatches).toContainEqual(expect.objectContaining({ sku, reserved: 6, held: 1 }));
  expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ reserved: 1, available: 9 });
  expect(await h.db.query('SELECT low_stock FROM skus WHERE sku = $1', [sku])).toEqual([{ low_stock: false }]);
  expect((await tryOrder(sku, 4)).status).toBe(201);
  expect(await events(sku)).toHaveLength(2);
  expect((await h.api.post(`/orders/${held.body.id}/cancel`)).status).toBe(200);
});

describe('switching a location on or off moves its SKUs available: low stock is judged again', () => {
  const putLocation = (id: string, active: boolean) => h.api.admin('PUT', `/admin/locations/${id}`, { name: id, priority: 5, active });
  const setAt = (sku: string, location: string, onHand: number) => h.api.admin('PUT', `/admin/inventory/${sku}/locations/${location}`, { onHand });
  const available = async (sku: string): Promise<number> => (await h.api.get(`/inventory/${sku}`)).body.available;

  it('off: a SKU that falls to its threshold is announced; on: it is cleared, and the next fall is announced again', async () => {
    const store = `low-${tag}-off`;
    expect((await putLocation(store, true)).status).toBe(200);
    const sku = `LOW-${tag}-L`;
    const bystander = `LOW-${tag}-N`; // held there too, but no threshold: not judged
    expect((await putSku(sku, 3)).status).toBe(200);
    expect((await putSku(bystander, 1)).status).toBe(200);
    expect((await setAt(sku, store, 10)).status).toBe(200);
    expect((await setAt(bystander, store, 1)).status).toBe(200);
    expect((await putSku(sku, 3, 5)).status).toBe(200);
    expect(await available(sku)).toBe(13);
    expect(await events(sku)).toEqual([]);
    const gauge = await lowStockGauge();

    // The same state again changes nothing.
    expect((await putLocation(store, true)).status).toBe(200);
    expect(await events(sku)).toEqual([]);

    const off = await putLocation(store, false);
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: store, active: false });
    expect(await available(sku)).toBe(3);
    const fell = await events(sku);
    expect(fell).toHaveLength(1);
    expect(fell[0]).toMatchObject({ sku, available: 3, lowStockThreshold: 5 });
    expect(await lowStockGauge()).toBe(gauge + 1);
    expect(await events(bystander)).toEqual([]);
    // Off again: still low, nothing more.
    expect((await putLocation(store, false)).status).toBe(200);
    expect(await events(sku)).toHaveLength(1);

    expect((await putLocation(store, true)).status).toBe(200);
    expect(await available(sku)).toBe(13);
    expect(await lowStockGauge()).toBe(gauge);
    expect(await events(sku)).toHaveLength(1);
    expect((await tryOrder(sku, 9)).status).toBe(201);
    expect(await events(sku)).toHaveLength(2);
  });

  it('a flag set by a Try is cleared when a location switched on lifts the SKU above, so the next Try that falls is announced', async () => {
    const store = `low-${tag}-on`;
    expect((await putLocation(store, true)).status).toBe(200);
    const sku = `LOW-${tag}-R`;
    expect((await putSku(sku, 13)).status).toBe(200);
    expect((await setAt(sku, store, 10)).status).toBe(200);
    expect((await putLocation(store, false)).status).toBe(200);
    expect((await putSku(sku, 13, 5)).status).toBe(200);
    expect(await available(sku)).toBe(13);

    expect((await tryOrder(sku, 9)).status).toBe(201);
    expect(await events(sku)).toHaveLength(1);
    // The store's 10 count again: 14 available, above the threshold.
    expect((await putLocation(store, true)).status).toBe(200);
    expect(await available(sku)).toBe(14);
    const flagged = await h.db.query<{ low_stock: boolean }>('SELECT low_stock FROM skus WHERE sku = $1', [sku]);
    expect(flagged).toEqual([{ low_stock: false }]);
    expect((await tryOrder(sku, 10)).status).toBe(201);
    expect(await available(sku)).toBe(4);
    expect(await events(sku)).toHaveLength(2);
  });

  it('toggles racing Trys, cancels and sets on the same SKUs leave every flag equal to the truth, with no deadlock and no 500', async () => {
    const store = `low-${tag}-race`;
    expect((await putLocation(store, true)).status).toBe(200);
    const skus = [0, 1, 2].map((i) => `LOW-${tag}-X${i}`);
    for (const sku of skus) {
      expect((await putSku(sku, 20, 25)).status).toBe(200);
      expect((await setAt(sku, store, 20)).status).toBe(200);
    }
    const statuses: number[] = [];
    const held: string[] = [];
    await Promise.all([
      (async () => {
        for (let round = 0; round < 12; round++) statuses.push((await putLocation(store, round % 2 === 0)).status);
      })(),
      ...skus.map(async (sku, i) => {
        for (let round = 0; round < 10; round++) {
          const o = await tryOrder(sku, 1);
          statuses.push(o.status);
          if (o.status === 201) held.push(o.body.id);
          if (round % 3 === i) statuses.push((await setAt(sku, store, 18 + round)).status);
          if (round % 4 === 0 && held.length) statuses.push((await h.api.post(`/orders/${held.shift()}/cancel`)).status);
        }
      }),
    ]);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    // Whatever the order they ran in, each flag says what is true now; and after each switch that follows.
    const truth = async () =>
      h.db.query<{ sku: string; low_stock: boolean; low_now: boolean }>(
        `SELECT s.sku, s.low_stock,
                coalesce(sum(greatest(st.on_hand - st.reserved - st.safety_stock, 0)) FILTER (WHERE l.active), 0) <= s.low_stock_threshold AS low_now
           FROM skus s JOIN stock st ON st.sku = s.sku JOIN locations l ON l.id = st.location_id
          WHERE s.sku = ANY ($1) GROUP BY s.sku, s.low_stock, s.low_stock_threshold ORDER BY s.sku`,
        [skus],
      );
    const agree = (rows: { low_stock: boolean; low_now: boolean }[]) => expect(rows.map((t) => t.low_stock)).toEqual(rows.map((t) => t.low_now));
    const afterRace = await truth();
    agree(afterRace);
    expect(afterRace.every((t) => t.low_now)).toBe(true); // the last switch turned the store off
    expect((await putLocation(store, true)).status).toBe(200);
    const on = await truth();
    agree(on);
    expect(on.every((t) => !t.low_now)).toBe(true);
    expect((await putLocation(store, false)).status).toBe(200);
    agree(await truth());
    for (const sku of skus) expect((await events(sku)).length).toBeGreaterThanOrEqual(2);
  });
});
