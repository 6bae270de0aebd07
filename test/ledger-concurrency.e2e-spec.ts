import { randomUUID } from 'node:crypto';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { Answer, client, Client, resendWhileBusy, waitFor } from './support/http.js';
import { TERMINAL } from './support/orders.js';
import { deleteQueueKeys, queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';
import { stockDrift } from './support/stock.js';
import { rng } from './support/rng.js';

/**
 * Every way on hand and reserved move, at once, from two service processes on one database:
 * adjustments (some with an Idempotency-Key sent twice, some refused), stock sets by compare-and-set
 * (expectedOnHand read a moment before, so many are STOCK_CHANGED), imports of several SKUs and
 * locations, multi-line Trys, Confirms, Cancels and orders left to expire (4 s TTL). Afterwards, for
 * every SKU and location, the sum of its movements is its on hand, reserved is what holds there,
 * the consistency API reports nothing — and the ledger holds exactly the adjustments and sales the
 * clients were told happened.
 */
let db: TestDatabase;
let sim: SimulatorHandle;
const prefix = queuePrefix();
const procs: ServiceProcess[] = [];
const tag = randomUUID().slice(0, 6);
const LOCATIONS = ['default', `wh-${tag}`, `shop-${tag}`];
const SKUS = Array.from({ length: 5 }, (_, i) => `L${i}-${tag}`);

beforeAll(async () => {
  db = await createTestDatabase();
  sim = await startSimulator();
  const env = { DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix, RESERVATION_TTL_MS: '4000', SWEEP_INTERVAL_MS: '300', RECONCILE_INTERVAL_MS: '1000' };
  procs.push(await startService({ ...env, ROLE: 'all' }));
  procs.push(await startService({ ...env, ROLE: 'all' }));
  const admin = client(procs[0].url);
  for (const [i, id] of LOCATIONS.slice(1).entries()) expect((await admin.admin('PUT', `/admin/locations/${id}`, { name: id, priority: 10 * (i + 1), active: true })).status).toBe(200);
  const items = SKUS.flatMap((sku) => LOCATIONS.map((locationId) => ({ sku, locationId, onHand: 30, priceMinor: 500, currency: 'USD', lowStockThreshold: 20 })));
  expect((await admin.admin('POST', '/admin/inventory/import', { items })).status).toBe(200);
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await sim?.close();
  await db?.drop();
  await deleteQueueKeys(prefix);
});

it('adjustments, compare-and-set sets, imports, Trys, Confirms, Cancels and expiries at once: the ledger explains every on hand', async () => {
  const apis: Client[] = procs.map((p) => client(p.url));
  const next = rng(7331);
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)];
  const unexpected: string[] = [];
  const expect2 = (what: string, res: Answer, allowed: number[], codes: string[] = []) => {
    if (!allowed.includes(res.status) || (res.status >= 400 && !codes.includes(res.body?.code))) unexpected.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  /** 503s "the database is busy" sent again (support/http.ts, resendWhileBusy). */
  let busy = 0;
  const patient = (call: () => Promise<Answer>) => resendWhileBusy(call, () => busy++);
  /** Adjustment movements the clients were answered 201 for (replays answer the same id). */
  const adjusted = new Map<string, { sku: string; locationId: string; delta: number }>();
  const created: string[] = [];
  /** Orders left to expire. */
  const held: string[] = [];
  const counts = { adjust: 0, set: 0, setChanged: 0, import: 0, try: 0 };

  const operation = async (i: number) => {
    const api = apis[i % 2];
    const other = apis[(i + 1) % 2];
    const sku = pick(SKUS);
    const locationId = pick(LOCATIONS);
    const roll = next();
    if (roll < 0.2) {
      const body = { locationId, delta: next() < 0.6 ? 1 + Math.floor(next() * 8) : -1 - Math.floor(next() * 12), reason: pick(['received', 'damaged', 'correction', 'cycle_count']) };
      const key = next() < 0.3 ? `k-${randomUUID()}` : undefined;
      const send = (via: Client) => patient(() => via.send('POST', `/admin/inventory/${sku}/adjustments`, { body, admin: true, headers: key ? { 'idempotency-key': key } : {} }));
      const answers = key ? await Promise.all([send(api), send(other)]) : [await send(api)];
      for (const res of answers) {
        expect2('adjust', res, [201, 409], ['STOCK_BELOW_RESERVED']);
        if (res.status === 201) adjusted.set(res.body.movement.id, { sku, locationId, delta: body.delta });
      }
      if (answers.length === 2 && answers[0].status === 201 && answers[1].status === 201 && answers[0].body.movement.id !== answers[1].body.movement.id) {
        unexpected.push(`one key, two movements: ${key}`);
      }
      counts.adjust++;
    } else if (roll < 0.32) {
      const now = await api.get(`/inventory/${sku}`);
      const here = now.body.locations.find((l: { locationId: string }) => l.locationId === locationId);
      const onHand = Math.max(0, here.onHand + Math.floor(next() * 11) - 3);
      const res = await patient(() => other.admin('PUT', `/admin/inventory/${sku}/locations/${locationId}`, { onHand, expectedOnHand: here.onHand }));
      expect2('set', res, [200, 409], ['STOCK_CHANGED', 'STOCK_BELOW_RESERVED']);
      if (res.body?.code === 'STOCK_CHANGED') counts.setChanged++;
      counts.set++;
    } else if (roll < 0.4) {
      const rows = [...SKUS].sort(() => next() - 0.5).slice(0, 2).map((s) => ({ sku: s, locationId: pick(LOCATIONS), onHand: 15 + Math.floor(next() * 30) }));
      expect2('import', await patient(() => api.admin('POST', '/admin/inventory/import', { items: rows })), [200, 409], ['STOCK_BELOW_RESERVED']);
      counts.import++;
    } else {
      const items = [...SKUS].sort(() => next() - 0.5).slice(0, 1 + Math.floor(next() * 2)).map((s) => ({ sku: s, quantity: 1 + Math.floor(next() * 4) }));
      const key = randomUUID();
      const res = await patient(() => api.order(key, { customerId: `c-${i % 9}`, items }));
      expect2('try', res, [201, 409], ['INSUFFICIENT_STOCK']);
      counts.try++;
      if (res.status !== 201) return;
      created.push(res.body.id);
      const fate = next();
      // A Confirm may answer 202: the gateway did not answer within PAYMENT_TIMEOUT_MS (a loaded
      // machine); that order ends later, as every order here must.
      if (fate < 0.45) expect2('confirm', await patient(() => other.post(`/orders/${res.body.id}/confirm`, { paymentToken: 'tok_ok' })), [200, 202, 409], ['ORDER_CANCELED']);
      else if (fate < 0.7) expect2('cancel', await patient(() => other.post(`/orders/${res.body.id}/cancel`)), [200]);
      else held.push(res.body.id); // held until its TTL
    }
  };

  for (let wave = 0; wave < 5; wave++) {
    await Promise.all(Array.from({ length: 80 }, (_, i) => operation(wave * 80 + i)));
    // Between waves, with orders still holding: every invariant, and the service's own check agrees.
    expect(await stockDrift(db, SKUS)).toEqual([]);
    const check = await apis[wave % 2].get('/admin/inventory/consistency', true);
    expect(check.status).toBe(200);
    expect(check.body.mismatches).toEqual([]);
  }
  process.stdout.write(`ledger-concurrency: ${JSON.stringify({ ...counts, busyRetried: busy })}\n`);
  expect(unexpected).toEqual([]);
  expect(counts.setChanged).toBeGreaterThan(0);
  expect(Object.values(counts).every((n) => n > 0)).toBe(true);
  expect(created.length).toBeGreaterThan(100);

  await waitFor(
    'every order to end',
    async () => {
      const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE id = ANY ($1::uuid[]) AND NOT (status = ANY ($2::text[]))`, [created, TERMINAL]);
      return n === 0;
    },
    40_000,
    250,
  );

  const expired = await db.query<{ status: string }>(`SELECT status FROM orders WHERE id = ANY ($1::uuid[])`, [held]);
  expect(expired.length).toBeGreaterThan(20);
  expect(expired.every((o) => o.status === 'CANCELED')).toBe(true);
  expect(await stockDrift(db, SKUS)).toEqual([]);
  const final = await apis[1].get('/admin/inventory/consistency', true);
  expect(final.body).toEqual({ checked: SKUS.length * LOCATIONS.length, mismatches: [] });
  for (const r of await db.query<{ reserved: number }>(`SELECT reserved FROM stock WHERE sku = ANY ($1::text[])`, [SKUS])) expect(r.reserved).toBe(0);

  // The ledger holds exactly the adjustments the clients were answered 201 for, with their deltas…
  const adjustments = await db.query<{ id: string; sku: string; location_id: string; delta: number }>(
    `SELECT id::text, sku, location_id, delta FROM stock_movements WHERE kind = 'adjustment' AND sku = ANY ($1::text[])`,
    [SKUS],
  );
  expect(new Map(adjustments.map((m) => [m.id, { sku: m.sku, locationId: m.location_id, delta: m.delta }]))).toEqual(adjusted);
  // …and one sale per allocation of each confirmed order, referencing it.
  const [sales] = await db.query<{ missing: number; extra: number }>(
    `WITH sold AS (
       SELECT o.id::text AS ref, line->>'sku' AS sku, a->>'locationId' AS location_id, -(a->>'quantity')::int AS delta
         FROM orders o, jsonb_array_elements(o.items) AS line, jsonb_array_elements(line->'allocations') AS a
        WHERE o.id = ANY ($1::uuid[]) AND o.status = 'CONFIRM_SUCCESS'),
     moved AS (SELECT reference AS ref, sku, location_id, delta FROM stock_movements WHERE kind = 'sale' AND sku = ANY ($2::text[]))
     SELECT (SELECT count(*)::int FROM (SELECT * FROM sold EXCEPT ALL SELECT * FROM moved) x) AS missing,
            (SELECT count(*)::int FROM (SELECT * FROM moved EXCEPT ALL SELECT * FROM sold) y) AS extra`,
    [created, SKUS],
  );
  expect(sales).toEqual({ missing: 0, extra: 0 });
  const [{ n: confirmed }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE id = ANY ($1::uuid[]) AND status = 'CONFIRM_SUCCESS'`, [created]);
  expect(confirmed).toBeGreaterThan(20);
}, 180_000);
