import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Harness } from './harness.js';
import { waitFor } from './http.js';
import { rng } from './rng.js';
import { HANG_ENV } from './service.js';

/**
 * A shop's data at the size an on-call engineer and a stock manager meet (the console's trial):
 * two warehouses and a store (besides `default`, unused), ~200 SKUs over them, ~300 orders from
 * 40 customers in every state — 29 stuck in CONFIRM_PENDING by gateway faults (timeouts, errors,
 * the gateway down, then the breaker open) — a few that need attention, click-and-collect orders
 * and outside branches holding stock at the store, and a webhook endpoint that keeps failing.
 * Deterministic (one seeded random stream). The harness wants TRIAL_ENV.
 */
export const TRIAL_ENV = {
  ...HANG_ENV,
  CONFIRM_RETRY_BASE_MS: '600000',
  RESERVATION_TTL_MS: '900000',
  WEBHOOK_MAX_ATTEMPTS: '1',
  WEBHOOK_RETRY_BASE_MS: '100',
  BREAKER_VOLUME_THRESHOLD: '8',
  BREAKER_RESET_TIMEOUT_MS: '600000',
};

export const LOCATIONS = [
  { id: 'wh-east', name: 'Warehouse East', priority: 10 },
  { id: 'wh-west', name: 'Warehouse West', priority: 20 },
  { id: 'store-lyon', name: 'Store Lyon', priority: 30 },
];

const FIRST = ['anna', 'ben', 'chloe', 'dev', 'elif', 'farid', 'greta', 'hugo', 'ines', 'jonas', 'kaito', 'lena', 'marco', 'nora', 'omar', 'priya', 'quinn', 'rosa', 'sami', 'tara'];
const THINGS = ['Desk lamp', 'Mug', 'Vase', 'Throw', 'Cushion', 'Candle', 'Frame', 'Bowl', 'Clock', 'Planter'];
const MATERIALS = ['Oak', 'Linen', 'Stoneware', 'Brass', 'Wool', 'Glass', 'Walnut', 'Cotton', 'Marble', 'Rattan'];

export interface Trial {
  skus: string[];
  customers: string[];
  byState: Record<string, string[]>;
  stuck: string[];
  attention: string[];
  /** Orders whose lines were split across locations (a line at two places). */
  split: string[];
  /** The failing endpoint's receiver: `failing` decides its answer (500 with a body, else 204). */
  receiver: { url: string; failing: boolean; close(): Promise<void> };
}

async function ok(res: Promise<{ status: number; body: any }>, want: number[], what: string): Promise<any> {
  const r = await res;
  if (!want.includes(r.status)) throw new Error(`${what} -> ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** The warehouse system's endpoint: it answers 500 with a JSON error while `failing`. */
async function startWarehouse(): Promise<Trial['receiver']> {
  const state = { failing: true };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!state.failing) return void res.writeHead(204).end();
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'upstream_unavailable', message: 'warehouse DB: connection pool exhausted (max 20), request queued 5000 ms', requestId: 'wms-7f3a' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/wms/hooks`,
    get failing() {
      return state.failing;
    },
    set failing(v: boolean) {
      state.failing = v;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export async function seedTrial(h: Harness, seed = 36): Promise<Trial> {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));

  for (const l of LOCATIONS) await ok(h.api.admin('PUT', `/admin/locations/${l.id}`, { name: l.name, priority: l.priority, active: true }), [200], `location ${l.id}`);
  const receiver = await startWarehouse();
  const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
  await ok(h.api.admin('PUT', '/admin/webhooks/warehouse-sync', { url: receiver.url, events: ['order.reserved', 'order.confirmed'], secret }), [200], 'webhook');

  // ~200 SKUs over the two warehouses and the store, in one import; some run low at the store.
  const skus: string[] = [];
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < 200; i++) {
    const thing = pick(THINGS);
    const sku = `${thing.split(' ').pop()!.toUpperCase()}-${String(1000 + i)}`;
    skus.push(sku);
    const base = { sku, name: `${pick(MATERIALS)} ${thing.toLowerCase()}`, priceMinor: int(5, 300) * 100 + pick([0, 50, 90, 99]), currency: 'USD', lowStockThreshold: pick([0, 5, 10, 10, 20]) };
    items.push({ ...base, locationId: 'wh-east', onHand: int(0, 5) === 0 ? int(0, 6) : int(20, 400) });
    if (random() < 0.7) items.push({ ...base, locationId: 'wh-west', onHand: int(0, 150) });
    if (random() < 0.6) items.push({ ...base, locationId: 'store-lyon', onHand: int(0, 4) === 0 ? int(0, 3) : int(4, 30) });
  }
  await ok(h.api.admin('POST', '/admin/inventory/import', { items }), [200], 'import');
  const all = (await h.api.admin('GET', '/admin/inventory?limit=1000')).body.data as { sku: string; available: number; locations: { locationId: string; available: number }[] }[];
  const inStock = all.filter((i) => i.available >= 6).map((i) => i.sku);
  const atStore = all.filter((i) => (i.locations.find((l) => l.locationId === 'store-lyon')?.available ?? 0) >= 4).map((i) => i.sku);

  const customers = Array.from({ length: 40 }, (_, i) => `c-${FIRST[i % FIRST.length]}${i >= FIRST.length ? '2' : ''}-${String(100 + i * 7)}`);
  const byState: Record<string, string[]> = { TRY_SUCCESS: [], CONFIRM_SUCCESS: [], PAY_FAILED: [], CANCELED: [], CONFIRM_PENDING: [] };
  const split: string[] = [];
  /** A Try of 1-3 lines; a line the stock can no longer serve is picked again. */
  const tryOrder = async (store = false): Promise<any> => {
    for (let attempt = 0; ; attempt++) {
      const from = store ? atStore : inStock;
      const lines = Array.from(new Set(Array.from({ length: store ? 1 : int(1, 3) }, () => pick(from)))).map((sku) => ({ sku, quantity: int(1, 2) }));
      const r = await h.api.order(randomUUID(), { customerId: pick(customers), items: lines, ...(store ? { locationIds: ['store-lyon'] } : {}) });
      if (r.status === 201) return r.body;
      if (r.status !== 409 || attempt > 20) throw new Error(`Try -> ${r.status} ${JSON.stringify(r.body)}`);
    }
  };

  // The day's orders, as they came: most are paid, some declined, some abandoned, some waiting.
  const plan = [
    ...Array<string>(92).fill('paid'),
    ...Array<string>(18).fill('declined'),
    ...Array<string>(40).fill('canceled'),
    ...Array<string>(100).fill('held'),
    ...Array<string>(8).fill('error'),
    ...Array<string>(9).fill('timeout'),
  ].sort(() => random() - 0.5);
  for (const step of plan) {
    const o = await tryOrder(step === 'held' && random() < 0.12);
    if (o.items.some((i: any) => i.allocations.length > 1)) split.push(o.id);
    switch (step) {
      case 'held':
        byState.TRY_SUCCESS.push(o.id);
        break;
      case 'canceled':
        await ok(h.api.post(`/orders/${o.id}/cancel`), [200], 'cancel');
        byState.CANCELED.push(o.id);
        break;
      case 'declined':
        await ok(h.api.post(`/orders/${o.id}/confirm`, { paymentToken: 'tok_decline' }), [402], 'declined confirm');
        byState.PAY_FAILED.push(o.id);
        break;
      case 'paid':
        await ok(h.api.post(`/orders/${o.id}/confirm`), [200], 'confirm');
        byState.CONFIRM_SUCCESS.push(o.id);
        break;
      default:
        await h.sim.script([step === 'error' ? 'error' : 'hang']);
        await ok(h.api.post(`/orders/${o.id}/confirm`), [202], 'stuck confirm');
        byState.CONFIRM_PENDING.push(o.id);
    }
  }
  // Then the gateway goes down: it answers 503 until the breaker opens (8 failures in a row),
  // which refuses the rest unsent. A restart first, so the breaker counts from nothing.
  await h.restart();
  await h.sim.setFaults({ down: true });
  for (let i = 0; i < 12; i++) {
    const o = await tryOrder();
    await ok(h.api.post(`/orders/${o.id}/confirm`), [202], 'confirm while down');
    byState.CONFIRM_PENDING.push(o.id);
  }
  const breaker = (await h.api.admin('GET', '/admin/stats')).body.breaker;
  if (breaker !== 'open') throw new Error(`the breaker is ${breaker} after the gateway went down`);
  await h.sim.setFaults({ down: false });

  // Reconciliation found three paid orders the gateway captured twice.
  const attention = byState.CONFIRM_SUCCESS.slice(0, 3);
  for (const id of attention) {
    await h.db.query(`SELECT tcc_flag_attention($1::uuid, 'reconciliation_mismatch', $2::jsonb)`, [id, JSON.stringify({ kind: 'multiple_captures', detail: 'confirmed, but the gateway has 2 captures' })]);
  }
  // Two outside coordinators hold stock at the store; a few hand adjustments by a script.
  for (const sku of atStore.slice(-2)) {
    await ok(h.api.admin('POST', '/tcc/inventory/try', { transactionId: `pos-${randomUUID()}`, items: [{ sku, quantity: 1 }], locationIds: ['store-lyon'] }), [200], 'branch');
  }
  for (const sku of skus.slice(0, 5)) {
    await ok(h.api.admin('POST', `/admin/inventory/${sku}/adjustments`, { locationId: 'wh-east', delta: 12, reason: 'received', reference: 'PO-8812' }), [201], 'adjustment');
  }
  await waitFor('the failing deliveries', async () => (await h.api.admin('GET', '/admin/webhooks')).body.data[0]?.failedDeliveries >= 300, 60_000, 250);
  return { skus, customers, byState, stuck: byState.CONFIRM_PENDING, attention, split, receiver };
}
