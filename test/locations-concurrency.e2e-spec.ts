import { randomUUID } from 'node:crypto';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { client, Client, waitFor } from './support/http.js';
import { TERMINAL, waitForStatus } from './support/orders.js';
import { deleteQueueKeys, queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';
import { stockByLocation, stockDrift } from './support/stock.js';
import { rng } from './support/rng.js';

/**
 * Hundreds of concurrent multi-line Trys over three locations from two service processes, with
 * Confirms, Cancels, `locationIds`, both allocation strategies and orders left to expire: while
 * orders hold, every SKU and location reserves exactly what its orders hold there and never more
 * than it has; once every order has ended, on hand there fell by exactly what was sold from there.
 */
let db: TestDatabase;
let sim: SimulatorHandle;
const prefix = queuePrefix();
const procs: ServiceProcess[] = [];
const tag = randomUUID().slice(0, 6);
const LOCATIONS = [`wh-a-${tag}`, `wh-b-${tag}`, `shop-${tag}`];
const SKUS = Array.from({ length: 6 }, (_, i) => `C${i}-${tag}`);
const START: Record<string, number> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  sim = await startSimulator();
  const env = { DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix, RESERVATION_TTL_MS: '4000', SWEEP_INTERVAL_MS: '300' };
  procs.push(await startService({ ...env, ROLE: 'all' }));
  procs.push(await startService({ ...env, ROLE: 'all', ALLOCATION_STRATEGY: 'fewest-locations' }));
  const admin = client(procs[0].url);
  for (const [i, id] of LOCATIONS.entries()) expect((await admin.admin('PUT', `/admin/locations/${id}`, { name: id, priority: 10 * (i + 1), active: true })).status).toBe(200);
  const next = rng(9);
  for (const sku of SKUS) {
    expect((await admin.putSku(sku, 5 + Math.floor(next() * 10), 700)).status).toBe(200);
    for (const id of LOCATIONS) {
      const onHand = 40 + Math.floor(next() * 60);
      expect((await admin.admin('PUT', `/admin/inventory/${sku}/locations/${id}`, { onHand, safetyStock: Math.floor(next() * 3) })).status).toBe(200);
    }
  }
  for (const row of await stockByLocation(db, SKUS)) START[`${row.sku}@${row.location_id}`] = row.on_hand;
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await sim?.close();
  await db?.drop();
  await deleteQueueKeys(prefix);
});

it('stock is conserved at every location through concurrent multi-line Trys, Confirms, Cancels and expiries from two processes', async () => {
  const apis: Client[] = procs.map((p) => client(p.url));
  const next = rng(2026);
  const statuses: number[] = [];
  const created: string[] = [];
  let checkedWhileHolding = 0;
  for (let wave = 0; wave < 6; wave++) {
    await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const api = apis[i % 2];
        const picked = [...SKUS].sort(() => next() - 0.5).slice(0, 1 + Math.floor(next() * 3));
        const items = picked.map((sku) => ({ sku, quantity: 1 + Math.floor(next() * 4) }));
        const locationIds = next() < 0.2 ? [LOCATIONS[Math.floor(next() * 3)], ...(next() < 0.5 ? ['default'] : [])] : undefined;
        const res = await api.order(randomUUID(), { customerId: `c-${i % 7}`, items, ...(locationIds ? { locationIds } : {}) });
        statuses.push(res.status);
        if (res.status !== 201) return;
        created.push(res.body.id);
        // Every line whole, at most where it was allowed.
        for (const item of res.body.items) {
          expect(item.allocations.reduce((n: number, a: { quantity: number }) => n + a.quantity, 0)).toBe(item.quantity);
          if (locationIds) for (const a of item.allocations) expect(locationIds).toContain(a.locationId);
        }
        const fate = next();
        const other = apis[(i + 1) % 2];
        if (fate < 0.4) statuses.push((await other.post(`/orders/${res.body.id}/confirm`, { paymentToken: 'tok_ok' })).status);
        else if (fate < 0.6) statuses.push((await other.post(`/orders/${res.body.id}/cancel`)).status);
        // the rest hold until their TTL
      }),
    );
    // Between waves, while orders hold: reserved is exactly what holding orders hold there.
    expect(await stockDrift(db, SKUS)).toEqual([]);
    checkedWhileHolding += 1;
  }
  expect(statuses.filter((s) => s >= 500)).toEqual([]);
  expect(created.length).toBeGreaterThan(150);
  // Both ways of allocating and several locations per line were used.
  const lines = await db.query<{ n: number }>(
    `SELECT jsonb_array_length(line->'allocations') AS n FROM orders o, jsonb_array_elements(o.items) AS line WHERE o.id = ANY ($1::uuid[])`,
    [created],
  );
  expect(lines.filter((l) => l.n > 1).length).toBeGreaterThan(5);

  // Every order ends (a Confirm, a Cancel, or its TTL); then on hand fell by what was sold there.
  await waitFor(
    'every order to end',
    async () => {
      const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE id = ANY ($1::uuid[]) AND NOT (status = ANY ($2::text[]))`, [created, TERMINAL]);
      return n === 0;
    },
    40_000,
    250,
  );
  await waitForStatus(apis[0], created[0], TERMINAL);
  const rows = await stockByLocation(db, SKUS);
  for (const r of rows) expect(r).toEqual({ ...r, reserved: 0, on_hand: START[`${r.sku}@${r.location_id}`] - r.sold });
  expect(rows.some((r) => r.sold > 0 && r.location_id !== 'default')).toBe(true);
  expect(await stockDrift(db, SKUS)).toEqual([]);
  expect(checkedWhileHolding).toBe(6);
}, 120_000);
