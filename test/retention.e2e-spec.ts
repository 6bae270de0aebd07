import { randomBytes, randomUUID } from 'node:crypto';
import { RETENTION_SQL } from '../src/recovery/retention.sql.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { waitForStatus } from './support/orders.js';

/**
 * Retention over real rows: orders made through the API and moved through their states, outside
 * branches through /tcc/inventory, webhook deliveries written by the outbox, then back-dated by
 * 40 days. The service starts with RETENTION_DAYS=0 (nothing may go), then again with 30.
 */
const h = useHarness({
  RETENTION_DAYS: '0',
  RETENTION_INTERVAL_MS: '1000',
  RESERVATION_TTL_MS: '600000',
  CONFIRM_RETRY_BASE_MS: '600000',
  REFUND_ALERT_AFTER_MS: '600000',
});

const OLD = `interval '40 days'`;
const sku = `RET-${randomBytes(4).toString('hex')}`;
const body = (n: number) => ({ customerId: 'retention', items: [{ sku, quantity: n }] });
const tcc = (op: string, transactionId: string) =>
  h.api.send('POST', `/tcc/inventory/${op}`, { body: { transactionId, items: [{ sku, quantity: 1 }], timeoutMs: 3_600_000 }, admin: true });

async function order(key: string, n = 1): Promise<string> {
  const res = await h.api.order(key, body(n));
  expect(res.status).toBe(201);
  return res.body.id;
}

async function pending(key: string, token: string): Promise<string> {
  const id = await order(key);
  await h.sim.script(['error']);
  expect((await h.api.post(`/orders/${id}/confirm`, { paymentToken: token })).status).toBe(202);
  return id;
}

const tokenOf = async (id: string) => (await h.db.query(`SELECT payment_token FROM orders WHERE id = $1`, [id]))[0]?.payment_token;
const ids = async (sql: string, params: unknown[]) => (await h.db.query<{ id: string }>(sql, params)).map((r) => r.id).sort();

/** Everything the test made, named by what retention must do with it. */
const rows = { goneOrders: [] as string[], keptOrders: [] as string[], keys: {} as Record<string, string> };
const branches = { gone: [] as string[], kept: [] as string[] };
const deliveries = { gone: [] as string[], kept: [] as string[] };
const audit = { gone: '', kept: '' };
let stockBefore: unknown;

/** Every row this test keeps an eye on, per table. */
async function snapshot() {
  const orders = [...rows.goneOrders, ...rows.keptOrders];
  const txs = [...branches.gone, ...branches.kept];
  return {
    orders: await ids(`SELECT id::text FROM orders WHERE id = ANY ($1::uuid[])`, [orders]),
    ordersWithEvents: await ids(`SELECT DISTINCT order_id::text AS id FROM order_events WHERE order_id = ANY ($1::uuid[])`, [orders]),
    ordersWithBarrier: await ids(`SELECT substr(transaction_id, 5) AS id FROM tcc_barrier WHERE transaction_id = ANY ($1::text[]) AND op = 'try'`, [orders.map((o) => `tcc-${o}`)]),
    branches: await ids(`SELECT DISTINCT transaction_id AS id FROM tcc_barrier WHERE transaction_id = ANY ($1::text[])`, [txs]),
    branchesWithReservations: await ids(`SELECT DISTINCT transaction_id AS id FROM reservations WHERE transaction_id = ANY ($1::text[])`, [txs]),
    branchRows: await ids(`SELECT transaction_id AS id FROM participant_branches WHERE transaction_id = ANY ($1::text[])`, [txs]),
    deliveries: await ids(`SELECT id::text FROM webhook_deliveries WHERE id = ANY ($1::uuid[])`, [[...deliveries.gone, ...deliveries.kept]]),
    audit: await ids(`SELECT id::text FROM audit_log WHERE id = ANY ($1::bigint[])`, [[audit.gone, audit.kept]]),
  };
}

const sorted = (...lists: string[][]) => lists.flat().sort();

beforeAll(async () => {
  expect((await h.api.putSku(sku, 100)).status).toBe(200);
  await h.db.query(
    `INSERT INTO webhooks (name, url, events, secret) VALUES ('retention', 'http://127.0.0.1:9/hook',
       ARRAY['order.reserved', 'order.confirmed', 'order.payment_failed', 'order.canceled', 'order.pending', 'order.needs_attention'], 'whsec_dGVzdA==')`,
  );
  const key = (name: string) => (rows.keys[name] = `ret-${name}-${randomUUID()}`);

  // Finished, nothing open: these go.
  const paid = await order(key('paid'));
  expect((await h.api.post(`/orders/${paid}/confirm`, { paymentToken: 'tok_visa' })).status).toBe(200);
  const declined = await order(key('declined'));
  expect((await h.api.post(`/orders/${declined}/confirm`, { paymentToken: 'tok_decline' })).status).toBe(402);
  const canceled = await order(key('canceled'));
  expect((await h.api.post(`/orders/${canceled}/cancel`)).body.status).toBe('CANCELED');
  const refundDone = await pending(key('refundDone'), 'tok_refund_done');
  const refundOpen = await pending(key('refundOpen'), 'tok_refund_open');
  const refundAttention = await pending(key('refundAttention'), 'tok_refund_attention');
  // A token is kept while the order may still be charged with it...
  expect(await tokenOf(refundDone)).toBe('tok_refund_done');
  for (const id of [refundDone, refundOpen, refundAttention]) expect((await h.api.post(`/orders/${id}/cancel`)).body.status).toBe('CANCELED');
  // ...and erased once the order is terminal, paid or released.
  for (const id of [paid, declined, refundDone, refundOpen, refundAttention]) expect([id, await tokenOf(id)]).toEqual([id, null]);
  // A release after a charge that may have reached the gateway owes a refund watch; a definite
  // decline cannot owe anything, so it has none. The watch ends for refundDone, as it does a
  // minute later (max(60 s, 10 × PAYMENT_TIMEOUT_MS)); the others stay open (for a day, so no
  // round closes them during the test).
  expect(await h.db.query(`SELECT id::text FROM orders WHERE id = ANY ($1::uuid[]) AND refund_status = 'PENDING'`, [[declined, refundDone]])).toEqual([{ id: refundDone }]);
  expect((await h.db.query(`SELECT refund_status FROM orders WHERE id = $1`, [declined]))[0].refund_status).toBeNull();
  await h.db.query(`UPDATE orders SET refund_status = 'DONE', refund_next_at = NULL, refund_check_until = now() WHERE id = $1`, [refundDone]);
  await h.db.query(`UPDATE orders SET refund_next_at = now() + interval '1 day', refund_check_until = now() + interval '1 day' WHERE id = ANY ($1::uuid[])`, [[refundOpen, refundAttention]]);
  await h.db.query(`UPDATE orders SET refund_status = 'NEEDS_ATTENTION' WHERE id = $1`, [refundAttention]);

  // Finished but needing a human, holding stock, or recent: these stay.
  const attention = await order(key('attention'));
  expect((await h.api.post(`/orders/${attention}/confirm`)).status).toBe(200);
  expect((await h.db.query(`SELECT tcc_flag_attention($1, 'reconciliation_mismatch', '{}') AS f`, [attention]))[0].f).toBe(true);
  const holding = await order(key('holding'));
  const holdingPending = await pending(key('holdingPending'), 'tok_pending');
  const recent = await order(key('recent'));
  expect((await h.api.post(`/orders/${recent}/confirm`)).status).toBe(200);
  await waitForStatus(h.api, holdingPending, ['CONFIRM_PENDING']);

  rows.goneOrders = [paid, declined, canceled, refundDone];
  rows.keptOrders = [refundOpen, refundAttention, attention, holding, holdingPending, recent];

  // Outside coordinators' branches: finished ones go, a reserved one and a recent one stay.
  const tx = (name: string) => `ret-${name}-${randomUUID()}`;
  const [confirmed, canceledTx, emptyRollback, reserved, recentTx] = ['confirmed', 'canceled', 'empty', 'reserved', 'recent'].map(tx);
  for (const t of [confirmed, canceledTx, reserved, recentTx]) expect((await tcc('try', t)).body.status).toBe('RESERVED');
  expect((await tcc('confirm', confirmed)).body.status).toBe('CONFIRMED');
  expect((await tcc('cancel', canceledTx)).body.status).toBe('CANCELED');
  expect((await tcc('cancel', emptyRollback)).body.status).toBe('CANCELED');
  expect((await tcc('confirm', recentTx)).body.status).toBe('CONFIRMED');
  branches.gone = [confirmed, canceledTx, emptyRollback].map((t) => `ext:${t}`);
  branches.kept = [reserved, recentTx].map((t) => `ext:${t}`);

  // Back-date everything old, in every table that keeps a time.
  const old = [...rows.goneOrders, ...rows.keptOrders.filter((o) => o !== recent)];
  await h.db.query(`UPDATE orders SET created_at = created_at - ${OLD}, updated_at = updated_at - ${OLD} WHERE id = ANY ($1::uuid[])`, [old]);
  await h.db.query(`UPDATE order_events SET at = at - ${OLD} WHERE order_id = ANY ($1::uuid[])`, [old]);
  const oldTxs = [...old.map((o) => `tcc-${o}`), ...branches.gone, `ext:${reserved}`];
  await h.db.query(`UPDATE tcc_barrier SET created_at = created_at - ${OLD} WHERE transaction_id = ANY ($1::text[])`, [oldTxs]);
  await h.db.query(`UPDATE reservations SET created_at = created_at - ${OLD} WHERE transaction_id = ANY ($1::text[])`, [oldTxs]);

  // The outbox: old finished deliveries go (also one of an order that stays); an old one still
  // pending and a recent finished one stay.
  const deliveryOf = async (orderId: string) => (await h.db.query(`SELECT id FROM webhook_deliveries WHERE order_id = $1 ORDER BY created_at`, [orderId])).map((r) => r.id as string);
  const goneOrderDeliveries = (await Promise.all(rows.goneOrders.map(deliveryOf))).flat();
  const [holdingDelivery] = await deliveryOf(holding);
  const [pendingDelivery] = await deliveryOf(holdingPending);
  const [recentDelivery] = await deliveryOf(recent);
  expect([goneOrderDeliveries.length >= 8, holdingDelivery, pendingDelivery, recentDelivery].every(Boolean)).toBe(true);
  const finish = (list: string[], status: string, age: string) =>
    h.db.query(`UPDATE webhook_deliveries SET status = $2, next_attempt_at = NULL, attempts = 99, created_at = created_at - ${age}, updated_at = updated_at - ${age} WHERE id = ANY ($1::uuid[])`, [list, status]);
  await finish(goneOrderDeliveries.filter((_, i) => i % 2 === 0), 'delivered', OLD);
  await finish(goneOrderDeliveries.filter((_, i) => i % 2 === 1), 'failed', OLD);
  await finish([holdingDelivery], 'delivered', OLD);
  await finish([recentDelivery], 'delivered', `interval '0 days'`);
  await h.db.query(`UPDATE webhook_deliveries SET status = 'pending', attempts = 99, next_attempt_at = now() + interval '1 day', created_at = created_at - ${OLD} WHERE id = $1`, [pendingDelivery]);
  deliveries.gone = [...goneOrderDeliveries, holdingDelivery];
  deliveries.kept = [pendingDelivery, recentDelivery];

  // The audit log: an entry 40 days old goes, a recent one stays.
  const entry = async (age: string) =>
    (await h.db.query<{ id: string }>(`INSERT INTO audit_log (action, target, outcome, at) VALUES ('sign_in', 'retention@example.test', 401, now() - ${age}) RETURNING id::text`))[0].id;
  audit.gone = await entry(OLD);
  audit.kept = await entry(`interval '0 days'`);

  stockBefore = (await h.api.get(`/inventory/${sku}`)).body;
});

const everything = () => ({
  orders: sorted(rows.goneOrders, rows.keptOrders),
  ordersWithEvents: sorted(rows.goneOrders, rows.keptOrders),
  ordersWithBarrier: sorted(rows.goneOrders, rows.keptOrders),
  branches: sorted(branches.gone, branches.kept),
  branchesWithReservations: sorted(branches.gone.filter((b) => !b.includes('-empty-')), branches.kept),
  branchRows: sorted(branches.gone, branches.kept),
  deliveries: sorted(deliveries.gone, deliveries.kept),
  audit: sorted([audit.gone, audit.kept]),
});

it('RETENTION_DAYS=0 keeps everything', async () => {
  await waitFor('the retention-off line', async () => h.svc.logs.some((l) => l.includes('retention is off')));
  await new Promise((r) => setTimeout(r, 3000)); // three RETENTION_INTERVAL_MS
  expect(await snapshot()).toEqual(everything());
  expect(h.svc.logs.filter((l) => l.includes('retention deleted'))).toEqual([]);
});

it('RETENTION_DAYS=30 deletes exactly the old finished rows, and nothing else', async () => {
  await h.restart({ RETENTION_DAYS: '30' });
  const runs = () => h.svc.logs.filter((l) => l.includes('retention deleted rows')).map((l) => JSON.parse(l));
  await waitFor('two retention runs', async () => runs().length >= 2);
  const [first, second] = runs();
  const gone = rows.goneOrders;
  expect(await snapshot()).toEqual({
    orders: sorted(rows.keptOrders),
    ordersWithEvents: sorted(rows.keptOrders),
    ordersWithBarrier: sorted(rows.keptOrders),
    branches: sorted(branches.kept),
    branchesWithReservations: sorted(branches.kept),
    branchRows: sorted(branches.kept),
    deliveries: sorted(deliveries.kept),
    audit: [audit.kept],
  });
  expect(first).toMatchObject({ orders: gone.length, reservations: 2, branches: 3, webhook_deliveries: deliveries.gone.length, audit_log: 1, complete: true });
  expect(first.order_events).toBeGreaterThanOrEqual(gone.length * 2);
  // Each gone order's try row and its confirm or cancel row, and the branches' rows (empty rollback: try + cancel).
  expect(first.barrier_rows).toBe(gone.length * 2 + 3 * 2);
  expect(second).toMatchObject({ orders: 0, order_events: 0, barrier_rows: 0, reservations: 0, branches: 0, webhook_deliveries: 0, audit_log: 0 });

  // The kept orders are untouched, and so is the stock.
  const kept = await h.db.query<{ id: string; status: string }>(`SELECT id::text, status FROM orders WHERE id = ANY ($1::uuid[]) ORDER BY id`, [rows.keptOrders]);
  expect(Object.fromEntries(kept.map((k) => [k.id, k.status]))).toEqual(
    Object.fromEntries(rows.keptOrders.map((id, i) => [id, ['CANCELED', 'CANCELED', 'CONFIRM_SUCCESS', 'TRY_SUCCESS', 'CONFIRM_PENDING', 'CONFIRM_SUCCESS'][i]])),
  );
  expect((await h.api.get(`/inventory/${sku}`)).body).toEqual(stockBefore);
  expect((await h.api.get(`/orders/${gone[0]}`)).status).toBe(404);

  // The per-status counts stay exact (the DELETE trigger), and the metric counts what went.
  const counted = await h.db.query(`SELECT status, sum(n)::int AS n FROM (SELECT status, n FROM order_counts UNION ALL SELECT status, delta FROM order_count_deltas) c GROUP BY status HAVING sum(n) <> 0 ORDER BY status`);
  expect(counted).toEqual(await h.db.query(`SELECT status, count(*)::int AS n FROM orders GROUP BY status ORDER BY status`));
  const metrics = String((await h.api.get('/metrics')).body);
  expect(metrics).toContain(`tcc_retention_deleted_total{kind="orders"} ${gone.length}`);
  expect(metrics).toContain(`tcc_retention_deleted_total{kind="webhook_deliveries"} ${deliveries.gone.length}`);

  expect(metrics).toContain(`tcc_retention_deleted_total{kind="branches"} 3`);
  expect(metrics).toContain(`tcc_retention_deleted_total{kind="audit_log"} 1`);

  // A branch that retention forgot is a new branch to the barrier: a Try of its id reserves again
  // (it must not trip over a leftover row), and a late Cancel of another is an empty rollback.
  const [confirmedTx, canceledTx] = branches.gone.map((b) => b.slice('ext:'.length));
  const again = await tcc('try', confirmedTx);
  expect(again.status).toBe(200);
  expect(again.body.status).toBe('RESERVED');
  expect((await tcc('cancel', confirmedTx)).body.status).toBe('CANCELED');
  expect((await tcc('cancel', canceledTx)).body.status).toBe('CANCELED');
  expect((await h.api.get(`/inventory/${sku}`)).body).toEqual(stockBefore);

  // The Idempotency-Key went with its order: replaying it makes a new order.
  const replay = await h.api.order(rows.keys.paid, body(1));
  expect(replay.status).toBe(201);
  expect(gone).not.toContain(replay.body.id);
});

it('finds every batch through an index, on 100k orders', async () => {
  await h.svc.stop(); // the rows below are old: a running retention would delete them under the EXPLAIN
  await h.db.query(`
    INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key, items, idempotency_key, request_hash, created_at, updated_at, force_confirmed)
    SELECT id, 'tcc-' || id, 'bulk', (ARRAY['CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'])[1 + g % 3], 0, 'USD', ts, 'charge-' || id, '[]', 'bulk-' || g, '', ts, ts, true
      FROM (SELECT g, gen_random_uuid() AS id, now() - g * interval '50 seconds' AS ts FROM generate_series(1, 100000) g) x`);
  await h.db.query(`INSERT INTO order_events (order_id, type, at) SELECT id, 'status.changed', created_at FROM orders WHERE customer_id = 'bulk'`);
  await h.db.query(`INSERT INTO tcc_barrier (transaction_id, op, reason, created_at) SELECT transaction_id, op, op, created_at FROM orders, unnest(ARRAY['try', 'confirm']) op WHERE customer_id = 'bulk'`);
  await h.db.query(`INSERT INTO tcc_barrier (transaction_id, op, reason, created_at) SELECT 'ext:bulk-' || g, op, op, now() - g * interval '50 seconds' FROM generate_series(1, 20000) g, unnest(ARRAY['try', 'cancel']) op`);
  await h.db.query(`INSERT INTO reservations (transaction_id, sku, location_id, quantity, created_at) SELECT 'ext:bulk-' || g, $1, 'default', 1, now() - g * interval '50 seconds' FROM generate_series(1, 20000) g`, [sku]);
  await h.db.query(`INSERT INTO webhook_deliveries (id, webhook_name, type, order_id, payload, status, created_at) SELECT gen_random_uuid(), 'retention', 'order.confirmed', id, '{}', 'delivered', created_at FROM orders WHERE customer_id = 'bulk'`);
  await h.db.query(`INSERT INTO audit_log (action, outcome, at) SELECT 'sign_in', 200, now() - g * interval '50 seconds' FROM generate_series(100000, 1, -1) g`);
  await h.db.query('ANALYZE');

  const params: Record<keyof typeof RETENTION_SQL, unknown[]> = {
    orders: [30, '-infinity', '00000000-0000-0000-0000-000000000000', 500, ['CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'], 'DONE'],
    branches: [30, 500],
    deliveries: [['delivered', 'failed'], 30, 500],
    audit: [30, 500],
  };
  const indexOf = { orders: 'orders_created', branches: 'tcc_barrier_ext_finished', deliveries: 'webhook_deliveries_by_status', audit: 'audit_log_pkey' };
  const client = await h.db.pool.connect();
  try {
    // Named statements run on generic plans after a few executions; check both kinds of plan.
    for (const mode of ['force_generic_plan', 'force_custom_plan']) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      for (const [name, stmt] of Object.entries(RETENTION_SQL) as [keyof typeof RETENTION_SQL, { text: string }][]) {
        await client.query(`PREPARE retention_check AS ${stmt.text}`);
        const literal = params[name].map((p) => (Array.isArray(p) ? `ARRAY[${p.map((v) => `'${v}'`).join(', ')}]` : `'${p}'`));
        const plan = (await client.query(`EXPLAIN EXECUTE retention_check(${literal.join(', ')})`)).rows.map((r) => r['QUERY PLAN']).join('\n');
        await client.query('DEALLOCATE retention_check');
        expect([name, mode, plan.match(/Seq Scan on (orders|order_events|tcc_barrier|reservations|webhook_deliveries|audit_log)\b/)?.[0]]).toEqual([name, mode, undefined]);
        expect([name, mode, plan.includes(`using ${indexOf[name]}`)]).toEqual([name, mode, true]);
      }
    }
  } finally {
    await client.query('RESET plan_cache_mode');
    client.release();
  }
});
