import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The whole schema of the first release. Invariants live in the database, not only in code:
 * stock can never be oversold (CHECK 0 <= reserved <= on_hand), an order's status is one of the
 * contract's five, and the TCC barrier's primary key makes each phase run at most once.
 */
export class Init1763740000000 implements MigrationInterface {
  name = 'Init1763740000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE skus (
        sku          text PRIMARY KEY CHECK (sku ~ '^[A-Za-z0-9_.:-]{1,64}$'),
        name         text NOT NULL DEFAULT '',
        price_minor  bigint NOT NULL CHECK (price_minor >= 0),
        currency     char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        on_hand      integer NOT NULL CHECK (on_hand >= 0),
        reserved     integer NOT NULL DEFAULT 0,
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT skus_reserved_within_on_hand CHECK (reserved >= 0 AND reserved <= on_hand)
      )`);

    // DTM-style barrier: one row per (transaction, phase). 'reason' is the phase that wrote the
    // row: a 'try' row written by a Cancel marks an empty rollback and fences off a late Try.
    await q.query(`
      CREATE TABLE tcc_barrier (
        transaction_id text NOT NULL,
        op             text NOT NULL CHECK (op IN ('try', 'confirm', 'cancel')),
        reason         text NOT NULL CHECK (reason IN ('try', 'confirm', 'cancel')),
        created_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (transaction_id, op)
      )`);

    await q.query(`
      CREATE TABLE reservations (
        transaction_id text NOT NULL,
        sku            text NOT NULL REFERENCES skus (sku),
        quantity       integer NOT NULL CHECK (quantity > 0),
        created_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (transaction_id, sku)
      )`);

    await q.query(`
      CREATE TABLE orders (
        id                      uuid PRIMARY KEY,
        transaction_id          text NOT NULL UNIQUE,
        customer_id             text NOT NULL,
        status                  text NOT NULL CHECK (status IN
                                  ('TRY_SUCCESS', 'CONFIRM_PENDING', 'CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED')),
        amount_minor            bigint NOT NULL CHECK (amount_minor >= 0),
        currency                char(3) NOT NULL,
        reservation_expires_at  timestamptz NOT NULL,
        confirm_attempts        integer NOT NULL DEFAULT 0 CHECK (confirm_attempts >= 0),
        payment_key             text NOT NULL UNIQUE,
        payment_token           text,
        payment_id              text,
        payment_requested_at    timestamptz,
        next_action_at          timestamptz,
        failure_reason          text,
        force_confirmed         boolean NOT NULL DEFAULT false,
        refund_status           text CHECK (refund_status IN ('PENDING', 'DONE', 'NEEDS_ATTENTION')),
        refund_check_until      timestamptz,
        refund_next_at          timestamptz,
        refund_failures         integer NOT NULL DEFAULT 0,
        created_at              timestamptz NOT NULL DEFAULT now(),
        updated_at              timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT orders_paid_has_payment CHECK (status <> 'CONFIRM_SUCCESS' OR payment_id IS NOT NULL OR force_confirmed)
      )`);
    await q.query(`CREATE INDEX orders_holding_expiry ON orders (reservation_expires_at)
                   WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`CREATE INDEX orders_pending_next_action ON orders (next_action_at) WHERE status = 'CONFIRM_PENDING'`);
    await q.query(`CREATE INDEX orders_refund_due ON orders (refund_next_at) WHERE refund_status = 'PENDING'`);
    await q.query(`CREATE INDEX orders_status_created ON orders (status, created_at, id)`);
    await q.query(`CREATE INDEX orders_created ON orders (created_at, id)`);

    await q.query(`
      CREATE TABLE order_items (
        order_id          uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
        sku               text NOT NULL REFERENCES skus (sku),
        quantity          integer NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
        unit_price_minor  bigint NOT NULL CHECK (unit_price_minor >= 0),
        PRIMARY KEY (order_id, sku)
      )`);

    await q.query(`
      CREATE TABLE order_events (
        id        bigserial PRIMARY KEY,
        order_id  uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
        type      text NOT NULL,
        data      jsonb NOT NULL DEFAULT '{}'::jsonb,
        at        timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX order_events_by_order ON order_events (order_id, id)`);

    // The key is claimed in the same transaction as the reservation: a refused Try rolls it back
    // and leaves the key free; a concurrent duplicate waits on the unique index, never inserts.
    await q.query(`
      CREATE TABLE idempotency_keys (
        key           text PRIMARY KEY CHECK (key ~ '^[A-Za-z0-9_.:-]{1,255}$'),
        request_hash  text NOT NULL,
        order_id      uuid NOT NULL REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED,
        created_at    timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['idempotency_keys', 'order_events', 'order_items', 'orders', 'reservations', 'tcc_barrier', 'skus']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
