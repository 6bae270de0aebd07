import { randomUUID } from 'node:crypto';
import { waitFor } from './support/http.js';
import { useHarness } from './support/harness.js';
import { expectValidation } from './support/problem.js';
import { startReceiver, Receiver } from './support/receiver.js';
import { stockDrift } from './support/stock.js';

/**
 * Low stock (API.md, "Low stock"): inventory.low_stock through the outbox once per fall to or below
 * the threshold — by Trys (many at once, batched), an adjustment, a set, an import, a SKU created
 * or given a threshold already at or below it — and again only after available rose above it;
 * the gauge tcc_inventory_low_stock_skus from the database.
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
