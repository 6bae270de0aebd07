import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { databaseUrl, PG_ADMIN_URL } from './support/env.js';
import { client, Client } from './support/http.js';
import { waitForStatus } from './support/orders.js';
import { deleteQueueKeys, queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';
import { stockDrift } from './support/stock.js';

/**
 * A deployment from before stock locations, upgraded: its database migrated only up to the
 * migration before them holds stock, orders and an outside branch in the old shape (one stock pool
 * per SKU, order lines without allocations). Then the service starts on it — its start-up runs the
 * locations migration, in one transaction — and must keep every hold at `default` and sell it.
 */
const FIRST_WITH_LOCATIONS = '1763850000000';
const name = `tcc_up_${randomBytes(5).toString('hex')}`;
const url = databaseUrl(name);
let db: pg.Client;
let sim: SimulatorHandle;
let svc: ServiceProcess;
let api: Client;
const prefix = queuePrefix();

/** Runs the built migrations older than the locations, with the app's own TypeORM options. */
function migrateBeforeLocations(): void {
  const script = `
    import { readdirSync } from 'node:fs';
    import { DataSource } from 'typeorm';
    import { dataSourceOptions } from './dist/database/options.js';
    const files = readdirSync('dist/migrations').filter((f) => f.endsWith('.js') && f < '${FIRST_WITH_LOCATIONS}').map((f) => process.cwd() + '/dist/migrations/' + f);
    const ds = await new DataSource({ ...dataSourceOptions(process.env.DATABASE_URL, 2), migrations: files }).initialize();
    await ds.runMigrations({ transaction: 'each' });
    await ds.destroy();`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, DATABASE_URL: url }, stdio: 'pipe' });
}

const SKU = `OLD-${randomBytes(3).toString('hex')}`;
const orderIds = { held: randomUUID(), pending: randomUUID(), canceledLater: randomUUID(), sold: randomUUID() };

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  migrateBeforeLocations();
  db = new pg.Client({ connectionString: url });
  await db.connect();
  // The old shape: one stock pool per SKU. 100 on hand, 3 + 2 + 4 held by orders, 5 by a branch.
  await db.query(`INSERT INTO skus (sku, name, price_minor, currency, on_hand, reserved) VALUES ($1, 'old', 250, 'USD', 100, 14)`, [SKU]);
  const order = (id: string, status: string, quantity: number) =>
    db.query(
      `INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key, items,
                           idempotency_key, request_hash, confirm_attempts, payment_requested_at, next_action_at)
       VALUES ($1::uuid, 'tcc-' || $1::text, 'c-old', $2::text, 250 * $3::int, 'USD', now() + interval '1 hour', 'charge-' || $1::text,
               jsonb_build_array(jsonb_build_object('sku', $4::text, 'quantity', $3::int, 'unitPriceMinor', 250)), 'key-' || $1::text, 'h', 0,
               CASE WHEN $2::text = 'CONFIRM_PENDING' THEN now() END, CASE WHEN $2::text = 'CONFIRM_PENDING' THEN now() + interval '1 hour' END)`,
      [id, status, quantity, SKU],
    );
  await order(orderIds.held, 'TRY_SUCCESS', 3);
  await order(orderIds.pending, 'CONFIRM_PENDING', 2);
  await order(orderIds.canceledLater, 'TRY_SUCCESS', 4);
  for (const id of [orderIds.held, orderIds.pending, orderIds.canceledLater]) {
    await db.query(`INSERT INTO tcc_barrier (transaction_id, op, reason) VALUES ('tcc-' || $1::text, 'try', 'try')`, [id]);
  }
  await db.query(`INSERT INTO tcc_barrier (transaction_id, op, reason) VALUES ('ext:old-branch', 'try', 'try')`);
  await db.query(`INSERT INTO reservations (transaction_id, sku, quantity) VALUES ('ext:old-branch', $1, 5)`, [SKU]);
  await db.query(
    `INSERT INTO participant_branches (transaction_id, status, items, expires_at) VALUES ('ext:old-branch', 'RESERVED', jsonb_build_array(jsonb_build_object('sku', $1::text, 'quantity', 5)), now() + interval '1 hour')`,
    [SKU],
  );

  sim = await startSimulator();
  svc = await startService({ DATABASE_URL: url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix, RESERVATION_TTL_MS: '600000' });
  api = client(svc.url);
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await sim?.close();
  await db?.end();
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
  await deleteQueueKeys(prefix);
});

it('the start-up moved the stock and every hold to default, in the new shape', async () => {
  const migrated = svc.logs.find((l) => l.includes('listening on port'));
  expect(migrated).toContain('StockLocations1763850000000');
  const inventory = (await api.get(`/inventory/${SKU}`)).body;
  expect(inventory).toMatchObject({
    onHand: 100,
    reserved: 14,
    available: 86,
    locations: [{ locationId: 'default', onHand: 100, reserved: 14, safetyStock: 0, available: 86, active: true }],
  });
  const held = (await api.get(`/orders/${orderIds.held}`)).body;
  expect(held.items).toEqual([{ sku: SKU, quantity: 3, unitPriceMinor: 250, allocations: [{ locationId: 'default', quantity: 3 }] }]);
  const branches = (await api.admin('GET', '/admin/participant/transactions?status=RESERVED')).body.data;
  expect(branches).toContainEqual(expect.objectContaining({ transactionId: 'old-branch', items: [{ sku: SKU, quantity: 5, allocations: [{ locationId: 'default', quantity: 5 }] }] }));
  // The ledger starts balanced: one opening movement of what was on hand.
  const movements = await db.query(`SELECT kind, delta, on_hand_after FROM stock_movements WHERE sku = $1`, [SKU]);
  expect(movements.rows).toEqual([{ kind: 'set', delta: 100, on_hand_after: 100 }]);
  expect(await stockDrift({ query: async (t: string, p?: unknown[]) => (await db.query(t, p)).rows } as never, [SKU])).toEqual([]);
});

it('sells and releases exactly what the old orders and the branch held', async () => {
  const confirmed = await api.post(`/orders/${orderIds.held}/confirm`, { paymentToken: 'tok_ok' });
  expect(confirmed.status).toBe(200);
  expect((await api.post(`/orders/${orderIds.canceledLater}/cancel`)).status).toBe(200);
  expect((await api.send('POST', '/tcc/inventory/confirm', { body: { transactionId: 'old-branch' }, admin: true })).status).toBe(200);
  // The CONFIRM_PENDING order goes on as before: an operator settles it.
  expect((await api.admin('POST', `/admin/orders/${orderIds.pending}/force-confirm`, { reason: 'paid before the upgrade' })).status).toBe(200);
  await waitForStatus(api, orderIds.pending, ['CONFIRM_SUCCESS']);
  const inventory = (await api.get(`/inventory/${SKU}`)).body;
  // 100 - 3 sold - 5 sold by the branch - 2 force-confirmed; nothing held any more.
  expect(inventory.locations).toEqual([{ locationId: 'default', onHand: 90, reserved: 0, safetyStock: 0, available: 90, active: true }]);
  const sales = await db.query(`SELECT delta, reference FROM stock_movements WHERE sku = $1 AND kind = 'sale' ORDER BY id`, [SKU]);
  expect(sales.rows).toEqual([
    { delta: -3, reference: orderIds.held },
    { delta: -5, reference: 'old-branch' },
    { delta: -2, reference: orderIds.pending },
  ]);
  expect(await stockDrift({ query: async (t: string, p?: unknown[]) => (await db.query(t, p)).rows } as never, [SKU])).toEqual([]);
  // And a new order sells from default as it always did.
  const fresh = await api.order(randomUUID(), { customerId: 'c-new', items: [{ sku: SKU, quantity: 1 }] });
  expect(fresh.body.items[0].allocations).toEqual([{ locationId: 'default', quantity: 1 }]);
});
