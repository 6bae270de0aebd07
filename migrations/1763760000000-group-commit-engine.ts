import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The group-commit engine's schema: Try, Confirm and every order move became one SQL function call
 * each, for a whole batch of orders at once. The order row carries its lines and its
 * Idempotency-Key; the attempt lease (lease_until) makes Confirm one gateway attempt at a time;
 * the "needs attention" flag is what operators acknowledge; the webhook outbox gets a delivery row
 * per subscribed endpoint, written in the transaction of the change it reports; order counts come
 * from statement-level triggers.
 *
 * The engine's functions themselves live in .sql files beside the code that calls them, applied
 * after the migrations (src/database/sql-functions.ts). This migration once created them; it now
 * creates only tcc_count_changes, because the triggers it creates need their function to exist
 * (count-changes.sql is the live version, applied over it). Its down() drops the functions but
 * does not bring any body back.
 */
export class GroupCommitEngine1763760000000 implements MigrationInterface {
  name = 'GroupCommitEngine1763760000000';

  async up(q: QueryRunner): Promise<void> {
    // The order row carries what a Try writes for it: its lines (sorted by SKU, as the contract's
    // JSON shows them) and its Idempotency-Key. One row and a few index entries per order, not
    // four tables: the hot path's cost is rows and index entries.
    await q.query(`
      ALTER TABLE orders
        ADD COLUMN items jsonb,
        ADD COLUMN idempotency_key text,
        ADD COLUMN request_hash text,
        ADD COLUMN lease_until timestamptz,
        ADD COLUMN needs_attention boolean NOT NULL DEFAULT false,
        ADD COLUMN attention_reason text,
        ADD COLUMN refund_owed_at timestamptz,
        DROP CONSTRAINT orders_paid_has_payment,
        ADD CONSTRAINT orders_paid_has_payment
          CHECK (status <> 'CONFIRM_SUCCESS' OR payment_id IS NOT NULL OR force_confirmed OR amount_minor = 0)`);
    await q.query(`
      UPDATE orders o SET items = coalesce((SELECT jsonb_agg(jsonb_build_object('sku', i.sku, 'quantity', i.quantity, 'unitPriceMinor', i.unit_price_minor)
                                                          ORDER BY i.sku COLLATE "C")
                                              FROM order_items i WHERE i.order_id = o.id), '[]'::jsonb),
                          idempotency_key = coalesce(k.key, 'legacy-' || o.id), request_hash = coalesce(k.request_hash, '')
        FROM orders x LEFT JOIN idempotency_keys k ON k.order_id = x.id
       WHERE x.id = o.id`);
    await q.query(`ALTER TABLE orders ALTER COLUMN items SET NOT NULL, ALTER COLUMN idempotency_key SET NOT NULL, ALTER COLUMN request_hash SET NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX orders_idempotency_key ON orders (idempotency_key)`);
    // This service's own orders keep their lines on the order; reservations stay for outside branches.
    await q.query(`DELETE FROM reservations WHERE transaction_id LIKE 'tcc-%'`);
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP TABLE order_items`);
    // The same facts as relations, for operators' ad-hoc SQL and reports.
    await q.query(`
      CREATE VIEW order_items AS
      SELECT o.id AS order_id, i.sku, i.quantity, i."unitPriceMinor" AS unit_price_minor
        FROM orders o CROSS JOIN LATERAL jsonb_to_recordset(o.items) AS i(sku text, quantity integer, "unitPriceMinor" bigint)`);
    await q.query(`CREATE VIEW idempotency_keys AS SELECT idempotency_key AS key, request_hash, id AS order_id, created_at FROM orders`);

    // Indexes that pay for themselves. transaction_id and payment_key are derived from the id
    // ('tcc-' / 'charge-' || id): unique already. Holding orders are found through partial indexes.
    await q.query(`ALTER TABLE orders DROP CONSTRAINT orders_transaction_id_key, DROP CONSTRAINT orders_payment_key_key`);
    for (const i of ['orders_finished_updated', 'orders_status_created', 'orders_holding_expiry', 'orders_holding_next_action']) {
      await q.query(`DROP INDEX IF EXISTS ${i}`);
    }
    await q.query(`CREATE INDEX orders_holding_due ON orders ((least(reservation_expires_at, next_action_at))) WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`CREATE INDEX orders_holding_created ON orders (created_at, id) WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`CREATE INDEX orders_holding_customer ON orders (customer_id) WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`CREATE INDEX orders_needing_attention ON orders (created_at, id) WHERE needs_attention`);

    await q.query(`
      CREATE TABLE webhooks (
        name        text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9_.:-]{1,64}$'),
        url         text NOT NULL,
        events      text[] NOT NULL,
        secret      text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // One row per (event, endpoint). The id is the event's: the webhook-id header, the same on
    // every retry and for every endpoint that receives the event.
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id              uuid NOT NULL,
        webhook_name    text NOT NULL REFERENCES webhooks (name) ON DELETE CASCADE,
        type            text NOT NULL,
        order_id        uuid,
        payload         text NOT NULL,
        status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts        integer NOT NULL DEFAULT 0,
        last_error      text,
        next_attempt_at timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (webhook_name, id)
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries (webhook_name, status, created_at, id)`);

    // Orders by status for /metrics, exact and cheap to read: statement-level triggers append each
    // statement's net change per status (inserts only: no row any two transactions fight over),
    // and the sweeper folds the deltas into the totals now and then.
    await q.query(`
      CREATE TABLE order_counts (
        status  text PRIMARY KEY,
        n       bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE TABLE order_count_deltas (id bigserial PRIMARY KEY, status text NOT NULL, delta bigint NOT NULL)`);
    await q.query(`INSERT INTO order_counts (status, n) SELECT status, count(*) FROM orders GROUP BY status`);
    for (const t of COUNT_TRIGGERS) await q.query(t);
  }

  async down(q: QueryRunner): Promise<void> {
    // The engine's functions (src/**/*.sql) are written for this schema: they go with it.
    for (const fn of [
      'tcc_apply(jsonb, text[], text)',
      'tcc_probe(text[], text[], int[], text[], int[])',
      'tcc_claim(uuid[], text[], boolean[], float8, text[])',
      'tcc_flag_attention(uuid, text, jsonb)',
      'tcc_try_batch(text[], text[], text[], int[], int[], text[], int[], float8, int, text[], boolean)',
      'tcc_emit(text, uuid[])',
      'tcc_order_json(orders)',
      'tcc_iso(timestamptz)',
    ]) {
      await q.query(`DROP FUNCTION IF EXISTS ${fn}`);
    }
    for (const t of ['orders_count_insert', 'orders_count_update', 'orders_count_delete']) await q.query(`DROP TRIGGER IF EXISTS ${t} ON orders`);
    await q.query(`DROP FUNCTION IF EXISTS tcc_count_changes()`);
    await q.query(`DROP TABLE IF EXISTS order_count_deltas`);
    await q.query(`DROP TABLE IF EXISTS order_counts`);
    await q.query(`DROP TABLE IF EXISTS webhook_deliveries`);
    await q.query(`DROP TABLE IF EXISTS webhooks`);
    for (const i of ['orders_needing_attention', 'orders_holding_customer', 'orders_holding_created', 'orders_holding_due']) await q.query(`DROP INDEX IF EXISTS ${i}`);
    await q.query(`CREATE INDEX orders_holding_expiry ON orders (reservation_expires_at) WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`CREATE INDEX orders_holding_next_action ON orders (next_action_at) WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`CREATE INDEX orders_finished_updated ON orders (updated_at) WHERE status IN ('CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED')`);
    await q.query(`CREATE INDEX orders_status_created ON orders (status, created_at, id)`);
    await q.query(`ALTER TABLE orders ADD CONSTRAINT orders_transaction_id_key UNIQUE (transaction_id), ADD CONSTRAINT orders_payment_key_key UNIQUE (payment_key)`);
    await q.query(`DROP VIEW IF EXISTS idempotency_keys`);
    await q.query(`DROP VIEW IF EXISTS order_items`);
    await q.query(`
      CREATE TABLE order_items (
        order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE, sku text NOT NULL REFERENCES skus (sku),
        quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000), unit_price_minor bigint NOT NULL CHECK (unit_price_minor >= 0),
        PRIMARY KEY (order_id, sku))`);
    await q.query(`
      INSERT INTO order_items (order_id, sku, quantity, unit_price_minor)
      SELECT o.id, i.sku, i.quantity, i."unitPriceMinor" FROM orders o, jsonb_to_recordset(o.items) AS i(sku text, quantity integer, "unitPriceMinor" bigint)`);
    await q.query(`
      CREATE TABLE idempotency_keys (
        key text PRIMARY KEY CHECK (key ~ '^[A-Za-z0-9_.:-]{1,255}$'), request_hash text NOT NULL,
        order_id uuid NOT NULL REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED, created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`INSERT INTO idempotency_keys (key, request_hash, order_id, created_at) SELECT idempotency_key, request_hash, id, created_at FROM orders`);
    await q.query(`
      INSERT INTO reservations (transaction_id, sku, quantity)
      SELECT o.transaction_id, i.sku, i.quantity FROM orders o, jsonb_to_recordset(o.items) AS i(sku text, quantity integer)
       WHERE o.status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`
      ALTER TABLE orders DROP CONSTRAINT orders_paid_has_payment,
        ADD CONSTRAINT orders_paid_has_payment CHECK (status <> 'CONFIRM_SUCCESS' OR payment_id IS NOT NULL OR force_confirmed),
        DROP COLUMN refund_owed_at, DROP COLUMN attention_reason, DROP COLUMN needs_attention, DROP COLUMN lease_until,
        DROP COLUMN request_hash, DROP COLUMN idempotency_key, DROP COLUMN items`);
  }
}

/**
 * Net change of orders per status, per statement (see order_counts): the triggers and the first
 * version of their function (src/orders/state/count-changes.sql is the live one).
 */
const COUNT_TRIGGERS = [
  `CREATE FUNCTION tcc_count_changes() RETURNS trigger LANGUAGE plpgsql AS $fn$
   BEGIN
     IF TG_OP = 'INSERT' THEN
       INSERT INTO order_count_deltas (status, delta) SELECT status, count(*) FROM new_rows GROUP BY status;
     ELSIF TG_OP = 'DELETE' THEN
       INSERT INTO order_count_deltas (status, delta) SELECT status, -count(*) FROM old_rows GROUP BY status;
     ELSE
       INSERT INTO order_count_deltas (status, delta)
       SELECT d.status, sum(d.delta) FROM (
         SELECT o.status, -1 AS delta FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.status <> o.status
         UNION ALL
         SELECT n.status, 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.status <> o.status) d
       GROUP BY d.status HAVING sum(d.delta) <> 0;
     END IF;
     RETURN NULL;
   END
   $fn$`,
  `CREATE TRIGGER orders_count_insert AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tcc_count_changes()`,
  `CREATE TRIGGER orders_count_update AFTER UPDATE ON orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tcc_count_changes()`,
  `CREATE TRIGGER orders_count_delete AFTER DELETE ON orders REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tcc_count_changes()`,
];
