import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The group-commit engine: Try, Confirm and every order move become one SQL function call each,
 * for a whole batch of orders at once. Each order stays all-or-nothing and independent of the
 * others in its batch, without a savepoint per order: an order is checked against the locked
 * stock in arrival order and written only once it is accepted, so a refused order never leaves a
 * row behind (its Idempotency-Key included).
 *
 * Lock order, the same everywhere, so batches cannot deadlock: Idempotency-Key advisory locks
 * (try-locks only, never waiting), customer advisory locks (sorted), order rows (sorted by id),
 * SKU rows (sorted by byte order, COLLATE "C"). Nothing here ever locks in another order.
 *
 * Also: the attempt lease (lease_until) that makes Confirm one gateway attempt at a time, the
 * "needs attention" flag operators acknowledge, and the webhook outbox (a delivery row per
 * subscribed endpoint, written in the transaction of the change it reports).
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

    for (const fn of FUNCTIONS) await q.query(fn);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const fn of [
      'tcc_apply(jsonb, text[], text)',
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
 * Try for a batch of orders, in arrival order. Per order: the Idempotency-Key (a replay answers
 * the first order; a key another transaction is claiming right now answers IN_PROGRESS instead of
 * waiting), the hold limit, unknown SKUs, one currency, then the stock. The stock is first judged
 * on the last committed state without any lock: an order that does not fit even there is refused
 * at once (the stock did not exist when this ran) and never waits for a hot row. The rest lock
 * their SKU rows in byte order and are judged again, one after the other, against what the
 * orders before them in the batch left. Only accepted orders are written — the order row (with
 * its lines and its key), barrier row, first event, outbox — and each SKU moves by one UPDATE of
 * the batch's sum.
 * With p_snapshot_only the locks are never taken: what the snapshot cannot refuse answers 'retry'.
 * Returns one row per order (1-based r_idx) and one 'stock' row per SKU with what is left of it.
 */
const TRY_BATCH = `
CREATE OR REPLACE FUNCTION tcc_try_batch(
  p_keys text[], p_hashes text[], p_customers text[],
  p_line_start int[], p_line_count int[], p_skus text[], p_qty int[],
  p_ttl_ms float8, p_max_holding int, p_holding text[], p_snapshot_only boolean)
RETURNS TABLE (r_idx int, r_outcome text, r_body text, r_sku text, r_requested int, r_available int)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  n int := coalesce(cardinality(p_keys), 0);
  v_out text[] := array_fill(NULL::text, ARRAY[n]);
  v_oid uuid[] := array_fill(NULL::uuid, ARRAY[n]);
  v_esku text[] := array_fill(NULL::text, ARRAY[n]);
  v_ereq int[] := array_fill(NULL::int, ARRAY[n]);
  v_eavail int[] := array_fill(NULL::int, ARRAY[n]);
  v_amount bigint[] := array_fill(0::bigint, ARRAY[n]);
  v_currency text[] := array_fill(NULL::text, ARRAY[n]);
  v_sku text[];
  v_si int[];
  v_found boolean[];
  v_avail int[];
  v_price bigint[];
  v_cur text[];
  v_need text[] := '{}';
  v_cust text[];
  v_held int[];
  v_acc int[] := '{}';
  v_acc_keys text[] := '{}';
  v_ins_ids uuid[];
  v_ins_bodies text[];
  v_dsku text[];
  v_dq int[];
  v_open int;
  i int; j int; k int; bad int; cur text;
  r record;
  v_now timestamptz := now();
  v_exp timestamptz := now() + make_interval(secs => p_ttl_ms / 1000);
BEGIN
  IF n = 0 THEN RETURN; END IF;

  SELECT array_agg(CASE WHEN pg_try_advisory_xact_lock(7701, hashtext(u.k)) THEN NULL ELSE 'IDEMPOTENCY_IN_PROGRESS' END ORDER BY u.i)
    INTO v_out FROM unnest(p_keys) WITH ORDINALITY u(k, i);
  FOR r IN SELECT o.idempotency_key AS key, o.request_hash, o.id AS order_id FROM orders o WHERE o.idempotency_key = ANY (p_keys) LOOP
    FOREACH i IN ARRAY array_positions(p_keys, r.key) LOOP
      IF v_out[i] IS NULL THEN
        IF r.request_hash = p_hashes[i] THEN v_out[i] := 'replayed'; v_oid[i] := r.order_id;
        ELSE v_out[i] := 'IDEMPOTENCY_KEY_REUSED';
        END IF;
      END IF;
    END LOOP;
  END LOOP;

  SELECT array_agg(d.s ORDER BY d.s COLLATE "C") INTO v_sku FROM (SELECT DISTINCT u.s FROM unnest(p_skus) u(s)) d;
  SELECT array_agg(array_position(v_sku, u.s) ORDER BY u.o) INTO v_si FROM unnest(p_skus) WITH ORDINALITY u(s, o);
  SELECT array_agg(x.found ORDER BY x.pos), array_agg(x.avail ORDER BY x.pos), array_agg(x.price ORDER BY x.pos), array_agg(x.cur ORDER BY x.pos)
    INTO v_found, v_avail, v_price, v_cur
    FROM (SELECT u.pos, s.sku IS NOT NULL AS found, s.on_hand - s.reserved AS avail, s.price_minor AS price, s.currency::text AS cur
            FROM unnest(v_sku) WITH ORDINALITY u(k, pos)
            LEFT JOIN LATERAL (SELECT * FROM skus s1 WHERE s1.sku = u.k) s ON true) x;

  FOR phase IN 1..2 LOOP
    IF phase = 1 AND p_max_holding > 0 THEN CONTINUE; END IF;  -- the limit outranks the stock: judged under the locks
    IF phase = 2 THEN
      v_open := 0;
      FOR i IN 1..n LOOP
        IF v_out[i] IS NULL THEN
          v_open := v_open + 1;
          IF p_snapshot_only THEN v_out[i] := 'retry'; END IF;
          FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP v_need := v_need || p_skus[j]; END LOOP;
        END IF;
      END LOOP;
      EXIT WHEN v_open = 0 OR p_snapshot_only;
      IF p_max_holding > 0 THEN
        SELECT array_agg(d.c ORDER BY d.c COLLATE "C") INTO v_cust
          FROM (SELECT DISTINCT p_customers[g] AS c FROM generate_series(1, n) g WHERE v_out[g] IS NULL) d;
        PERFORM pg_advisory_xact_lock(7702, hashtext(u.c)) FROM unnest(v_cust) WITH ORDINALITY u(c, pos) ORDER BY u.pos;
        SELECT array_agg(coalesce(h.cnt, 0) ORDER BY u.pos) INTO v_held
          FROM unnest(v_cust) WITH ORDINALITY u(c, pos)
          LEFT JOIN (SELECT o.customer_id, count(*)::int AS cnt FROM orders o
                      WHERE o.customer_id = ANY (v_cust) AND o.status = ANY (p_holding) GROUP BY o.customer_id) h ON h.customer_id = u.c;
      END IF;
      FOR r IN SELECT s.sku, s.on_hand - s.reserved AS avail, s.price_minor, s.currency::text AS cur
                 FROM skus s WHERE s.sku = ANY (v_need) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE LOOP
        k := array_position(v_sku, r.sku);
        v_found[k] := true; v_avail[k] := r.avail; v_price[k] := r.price_minor; v_cur[k] := r.cur;
      END LOOP;
    END IF;

    FOR i IN 1..n LOOP
      CONTINUE WHEN v_out[i] IS NOT NULL;
      IF phase = 2 THEN
        k := array_position(v_acc_keys, p_keys[i]);
        IF k IS NOT NULL THEN
          IF p_hashes[v_acc[k]] = p_hashes[i] THEN v_out[i] := 'replayed'; v_oid[i] := v_oid[v_acc[k]];
          ELSE v_out[i] := 'IDEMPOTENCY_KEY_REUSED';
          END IF;
          CONTINUE;
        END IF;
        IF p_max_holding > 0 AND v_held[array_position(v_cust, p_customers[i])] >= p_max_holding THEN
          v_out[i] := 'HOLD_LIMIT_REACHED';
          CONTINUE;
        END IF;
      END IF;
      bad := NULL;
      FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
        IF NOT v_found[v_si[j]] THEN bad := j; EXIT; END IF;
      END LOOP;
      IF bad IS NOT NULL THEN v_out[i] := 'UNKNOWN_SKU'; v_esku[i] := p_skus[bad]; CONTINUE; END IF;
      cur := v_cur[v_si[p_line_start[i]]];
      FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
        IF v_cur[v_si[j]] <> cur THEN v_out[i] := 'CURRENCY_MISMATCH'; EXIT; END IF;
      END LOOP;
      CONTINUE WHEN v_out[i] IS NOT NULL;
      bad := NULL;
      FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
        IF p_qty[j] > v_avail[v_si[j]] AND (bad IS NULL OR v_si[j] < v_si[bad]) THEN bad := j; END IF;
      END LOOP;
      IF bad IS NOT NULL THEN
        v_out[i] := 'INSUFFICIENT_STOCK'; v_esku[i] := p_skus[bad]; v_ereq[i] := p_qty[bad]; v_eavail[i] := greatest(v_avail[v_si[bad]], 0);
        CONTINUE;
      END IF;
      IF phase = 2 THEN
        FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
          v_avail[v_si[j]] := v_avail[v_si[j]] - p_qty[j];
          v_amount[i] := v_amount[i] + p_qty[j]::bigint * v_price[v_si[j]];
        END LOOP;
        v_currency[i] := cur;
        v_out[i] := 'created';
        v_oid[i] := gen_random_uuid();
        v_acc := v_acc || i;
        v_acc_keys := v_acc_keys || p_keys[i];
        IF p_max_holding > 0 THEN
          k := array_position(v_cust, p_customers[i]);
          v_held[k] := v_held[k] + 1;
        END IF;
      END IF;
    END LOOP;
  END LOOP;

  IF cardinality(v_acc) > 0 THEN
    WITH ins AS (
      INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key,
                          items, idempotency_key, request_hash, created_at, updated_at)
      SELECT v_oid[a.ai], 'tcc-' || v_oid[a.ai], p_customers[a.ai], 'TRY_SUCCESS', v_amount[a.ai], v_currency[a.ai], v_exp, 'charge-' || v_oid[a.ai],
             (SELECT jsonb_agg(jsonb_build_object('sku', p_skus[l.lj], 'quantity', p_qty[l.lj], 'unitPriceMinor', v_price[v_si[l.lj]]) ORDER BY p_skus[l.lj] COLLATE "C")
                FROM generate_series(p_line_start[a.ai], p_line_start[a.ai] + p_line_count[a.ai] - 1) AS l(lj)),
             p_keys[a.ai], p_hashes[a.ai], v_now, v_now
        FROM unnest(v_acc) AS a(ai)
      RETURNING id, tcc_order_json(orders)::text AS body)
    SELECT array_agg(ins.id), array_agg(ins.body) INTO v_ins_ids, v_ins_bodies FROM ins;
    INSERT INTO tcc_barrier (transaction_id, op, reason) SELECT 'tcc-' || v_oid[a.ai], 'try', 'try' FROM unnest(v_acc) AS a(ai);
    INSERT INTO order_events (order_id, type, data)
    SELECT v_oid[a.ai], 'status.changed', '{"from": null, "to": "TRY_SUCCESS", "reason": "stock reserved"}'::jsonb FROM unnest(v_acc) AS a(ai);
    SELECT array_agg(d.sku), array_agg(d.q) INTO v_dsku, v_dq
      FROM (SELECT p_skus[l.lj] AS sku, sum(p_qty[l.lj])::int AS q
              FROM unnest(v_acc) AS a(ai), generate_series(p_line_start[a.ai], p_line_start[a.ai] + p_line_count[a.ai] - 1) AS l(lj) GROUP BY 1) d;
    UPDATE skus s SET reserved = s.reserved + v_dq[array_position(v_dsku, s.sku)], updated_at = v_now WHERE s.sku = ANY (v_dsku);
    PERFORM tcc_emit('order.reserved', (SELECT array_agg(v_oid[a.ai]) FROM unnest(v_acc) AS a(ai)));
  END IF;

  RETURN QUERY
    SELECT g, v_out[g],
           CASE WHEN v_out[g] = 'created' THEN v_ins_bodies[array_position(v_ins_ids, v_oid[g])]
                WHEN v_out[g] = 'replayed' THEN coalesce(v_ins_bodies[array_position(v_ins_ids, v_oid[g])],
                                                         (SELECT tcc_order_json(o)::text FROM orders o WHERE o.id = v_oid[g])) END,
           v_esku[g], v_ereq[g], v_eavail[g]
      FROM generate_series(1, n) g;
  RETURN QUERY
    SELECT 0, 'stock'::text, NULL::text, v_sku[g], NULL::int, v_avail[g]
      FROM generate_subscripts(v_sku, 1) g WHERE v_found[g];
END
$fn$`;

/**
 * Claims a gateway attempt for each order: one at a time per order (the lease), only while it
 * holds stock and its reservation has not expired, and for a CONFIRM_PENDING order only once its
 * next step is due. A job (p_jobs) only takes a step that is due: never a TRY_SUCCESS order its
 * client has not asked to confirm. The first attempt fixes the payment token. Orders not claimed come back as
 * they stand (r_body), with the facts the caller decides on.
 */
const CLAIM = `
CREATE OR REPLACE FUNCTION tcc_claim(p_ids uuid[], p_tokens text[], p_jobs boolean[], p_lease_ms float8, p_holding text[])
RETURNS TABLE (r_idx int, r_claimed boolean, r_id uuid, r_status text, r_amount bigint, r_currency text, r_payment_key text,
               r_payment_token text, r_attempts int, r_charge_requested boolean, r_expired boolean, r_leased boolean,
               r_due boolean, r_lease text, r_body text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
BEGIN
  -- plpgsql, not sql: its statement's plan is kept for the session instead of made on every call.
  RETURN QUERY
  WITH req AS (SELECT u.id, u.token, u.job, u.ord::int AS ord FROM unnest(p_ids, p_tokens, p_jobs) WITH ORDINALITY u(id, token, job, ord)),
  first AS (SELECT DISTINCT ON (req.id) req.id, req.token, req.job, req.ord FROM req ORDER BY req.id, req.ord),
  upd AS (
    UPDATE orders o
       SET payment_token = CASE WHEN o.payment_requested_at IS NULL AND o.amount_minor > 0 THEN f.token ELSE o.payment_token END,
           payment_requested_at = CASE WHEN o.amount_minor > 0 THEN coalesce(o.payment_requested_at, now()) END,
           lease_until = now() + make_interval(secs => p_lease_ms / 1000),
           next_action_at = now() + make_interval(secs => p_lease_ms / 1000)
      FROM first f
     WHERE o.id = f.id AND o.status = ANY (p_holding) AND o.reservation_expires_at > now()
       AND (o.lease_until IS NULL OR o.lease_until <= now())
       AND CASE WHEN f.job THEN o.next_action_at <= now() ELSE (o.next_action_at IS NULL OR o.next_action_at <= now()) END
    RETURNING o.id, o.status, o.amount_minor, o.currency, o.payment_key, o.payment_token, o.confirm_attempts,
              o.payment_requested_at, o.lease_until, f.ord)
  SELECT r.ord, u.ord IS NOT NULL AND u.ord = r.ord, r.id,
         coalesce(u.status, o.status), coalesce(u.amount_minor, o.amount_minor), coalesce(u.currency, o.currency)::text,
         coalesce(u.payment_key, o.payment_key), coalesce(u.payment_token, o.payment_token),
         coalesce(u.confirm_attempts, o.confirm_attempts), coalesce(u.payment_requested_at, o.payment_requested_at) IS NOT NULL,
         o.reservation_expires_at <= now(), coalesce(o.lease_until > now(), false), coalesce(o.next_action_at <= now(), false),
         u.lease_until::text,
         CASE WHEN o.id IS NOT NULL AND (u.ord IS NULL OR u.ord <> r.ord) THEN tcc_order_json(o)::text END
    FROM req r LEFT JOIN upd u ON u.id = r.id LEFT JOIN orders o ON o.id = r.id
   ORDER BY r.ord;
END
$fn$`;

/**
 * Flags an order for a human (a refund still failing, a reconciliation mismatch, a capture on a
 * force-confirmed order) until an operator acknowledges it: once per episode, with its timeline
 * event and outbox row. Returns true when this call raised the flag.
 */
const ATTENTION = `
CREATE OR REPLACE FUNCTION tcc_flag_attention(p_id uuid, p_reason text, p_data jsonb) RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE orders SET needs_attention = true, attention_reason = p_reason, updated_at = now() WHERE id = p_id AND NOT needs_attention;
  IF NOT FOUND THEN RETURN false; END IF;
  INSERT INTO order_events (order_id, type, data) VALUES (p_id, 'attention.needed', jsonb_build_object('reason', p_reason) || coalesce(p_data, '{}'::jsonb));
  PERFORM tcc_emit('order.needs_attention', ARRAY[p_id]);
  RETURN true;
END
$fn$`;

/**
 * Applies a batch of order moves, each a compare-and-set from the states the TypeScript state
 * machine allows (m.from): the only writer of orders.status. A move that wins also moves its
 * stock through the barrier (commit or release, at most once per branch), records why, owes a
 * refund check when a released order may have been charged, erases the payment token on a
 * terminal state and writes the outbox. A move that loses changes nothing but its call event (the
 * gateway call did happen), and a charge that lost to a release is owed back (owe_refund_if_lost).
 * Order rows are locked by id, SKU rows in byte order — after the barrier rows, which only this
 * order's holder (the order row lock) ever writes for this service's own orders.
 */
const APPLY = `
CREATE OR REPLACE FUNCTION tcc_apply(p_moves jsonb, p_terminal text[], p_refund_pending text)
RETURNS TABLE (r_idx int, r_id uuid, r_won boolean, r_status text, r_previous text, r_refund_status text,
               r_next_action_at timestamptz, r_refund_next_at timestamptz, r_attempts int, r_body text, r_flagged boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  v_won uuid[];
  v_flagged uuid[];
  v_prev text[];
  v_stock_ids uuid[];
  v_dsku text[];
  v_sold int[];
  v_freed int[];
BEGIN
  PERFORM 1 FROM orders o WHERE o.id = ANY (ARRAY(SELECT (e->>'id')::uuid FROM jsonb_array_elements(p_moves) e)) ORDER BY o.id FOR NO KEY UPDATE;

  WITH m AS (SELECT * FROM jsonb_to_recordset(p_moves) AS x(id uuid, "to" text, "from" text[], set_failure boolean, failure_reason text,
                                                           payment_id text, add_attempts int, next_action_ms float8, force_confirmed boolean,
                                                           refund_watch_ms float8, lease text, stock text)),
  w AS (SELECT m.*, o.status AS previous FROM m JOIN orders o ON o.id = m.id
         WHERE o.status = ANY (m."from") AND (m.lease IS NULL OR o.lease_until = m.lease::timestamptz)),
  u AS (
    UPDATE orders o SET
        status = w."to",
        payment_id = coalesce(w.payment_id, o.payment_id),
        failure_reason = CASE WHEN w.set_failure THEN w.failure_reason ELSE o.failure_reason END,
        confirm_attempts = o.confirm_attempts + coalesce(w.add_attempts, 0),
        next_action_at = CASE WHEN w.next_action_ms IS NOT NULL THEN now() + make_interval(secs => w.next_action_ms / 1000) END,
        lease_until = NULL,
        force_confirmed = o.force_confirmed OR coalesce(w.force_confirmed, false),
        payment_token = CASE WHEN w."to" = ANY (p_terminal) THEN NULL ELSE o.payment_token END,
        refund_status = CASE WHEN w.stock = 'release' AND w.refund_watch_ms IS NOT NULL AND o.payment_requested_at IS NOT NULL THEN p_refund_pending ELSE o.refund_status END,
        refund_check_until = CASE WHEN w.stock = 'release' AND w.refund_watch_ms IS NOT NULL AND o.payment_requested_at IS NOT NULL
                                  THEN now() + make_interval(secs => w.refund_watch_ms / 1000) ELSE o.refund_check_until END,
        refund_next_at = CASE WHEN w.stock = 'release' AND w.refund_watch_ms IS NOT NULL AND o.payment_requested_at IS NOT NULL THEN now() ELSE o.refund_next_at END,
        refund_owed_at = CASE WHEN w.stock = 'release' AND w.refund_watch_ms IS NOT NULL AND o.payment_requested_at IS NOT NULL
                              THEN coalesce(o.refund_owed_at, now()) ELSE o.refund_owed_at END,
        updated_at = now()
      FROM w WHERE o.id = w.id
    RETURNING o.id, w.previous)
  SELECT array_agg(u.id), array_agg(u.previous) INTO v_won, v_prev FROM u;
  v_won := coalesce(v_won, '{}'); v_prev := coalesce(v_prev, '{}');

  -- Stock moves of the winners, through the barrier (each branch commits or releases at most once).
  SELECT array_agg(m.id) INTO v_stock_ids
    FROM jsonb_to_recordset(p_moves) AS m(id uuid, stock text) WHERE m.stock IS NOT NULL AND m.id = ANY (v_won);
  IF v_stock_ids IS NOT NULL THEN
    -- Through the barrier: a branch commits or releases at most once; only the rows it inserted move stock.
    WITH m AS (SELECT * FROM jsonb_to_recordset(p_moves) AS x(id uuid, stock text)),
    moving AS (SELECT o.id, o.transaction_id, CASE m.stock WHEN 'commit' THEN 'confirm' ELSE 'cancel' END AS op
                 FROM m JOIN orders o ON o.id = m.id WHERE m.id = ANY (v_stock_ids)),
    b AS (INSERT INTO tcc_barrier (transaction_id, op, reason) SELECT transaction_id, op, op FROM moving
          ON CONFLICT (transaction_id, op) DO NOTHING RETURNING transaction_id, op)
    SELECT array_agg(d.sku ORDER BY d.sku COLLATE "C"), array_agg(d.sold ORDER BY d.sku COLLATE "C"), array_agg(d.freed ORDER BY d.sku COLLATE "C")
      INTO v_dsku, v_sold, v_freed
      FROM (SELECT i.sku, sum(CASE WHEN b.op = 'confirm' THEN i.quantity ELSE 0 END)::int AS sold, sum(i.quantity)::int AS freed
              FROM b JOIN moving mv ON mv.transaction_id = b.transaction_id
              JOIN orders o ON o.id = mv.id CROSS JOIN LATERAL jsonb_to_recordset(o.items) AS i(sku text, quantity int)
             GROUP BY i.sku) d;
    IF v_dsku IS NOT NULL THEN
      -- SKU rows in byte order, each found through its primary key.
      PERFORM 1 FROM skus s WHERE s.sku = ANY (v_dsku) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE;
      UPDATE skus s SET on_hand = s.on_hand - v_sold[array_position(v_dsku, s.sku)],
                        reserved = s.reserved - v_freed[array_position(v_dsku, s.sku)], updated_at = now()
       WHERE s.sku = ANY (v_dsku);
    END IF;
  END IF;

  -- The timeline, one statement: per order the gateway call (won or not), the status change, then
  -- the notes of a winning move, in that order (ids follow the ORDER BY).
  INSERT INTO order_events (order_id, type, data)
  SELECT x.id, x.type, x.data FROM (
    SELECT m.id, m.ord, 0 AS k, 0 AS n, m.val->>'call_type' AS type, coalesce(m.val->'call_data', '{}'::jsonb) AS data
      FROM jsonb_array_elements(p_moves) WITH ORDINALITY AS m0(val, ord)
      CROSS JOIN LATERAL (SELECT (m0.val->>'id')::uuid AS id, m0.ord, m0.val) m
     WHERE m.val->>'call_type' IS NOT NULL
    UNION ALL
    SELECT w.id, m.ord, 1, 0, 'status.changed',
           jsonb_build_object('from', w.previous, 'to', m.val->>'to', 'reason', m.val->>'reason') || coalesce(nullif(m.val->'data', 'null'::jsonb), '{}'::jsonb)
      FROM jsonb_array_elements(p_moves) WITH ORDINALITY AS m(val, ord)
      JOIN unnest(v_won, v_prev) AS w(id, previous) ON w.id = (m.val->>'id')::uuid
     WHERE w.previous <> m.val->>'to'
    UNION ALL
    SELECT w.id, m.ord, 2, n.ord, n.val->>'type', coalesce(n.val->'data', '{}'::jsonb)
      FROM jsonb_array_elements(p_moves) WITH ORDINALITY AS m(val, ord)
      JOIN unnest(v_won) AS w(id) ON w.id = (m.val->>'id')::uuid
      CROSS JOIN LATERAL jsonb_array_elements(coalesce(nullif(m.val->'notes', 'null'::jsonb), '[]'::jsonb)) WITH ORDINALITY AS n(val, ord)
  ) x ORDER BY x.ord, x.k, x.n;

  IF cardinality(v_won) < jsonb_array_length(p_moves) THEN
    -- A charge that lost to a release: the stock is gone, so the money goes back.
    WITH m AS (SELECT * FROM jsonb_to_recordset(p_moves) AS x(id uuid, "to" text, owe_refund_if_lost boolean, refund_watch_ms float8, reason text)),
    owed AS (
      UPDATE orders o SET refund_status = p_refund_pending, refund_next_at = now(),
             refund_check_until = greatest(coalesce(o.refund_check_until, now()), now() + make_interval(secs => m.refund_watch_ms / 1000)),
             refund_owed_at = coalesce(o.refund_owed_at, now()), updated_at = now()
        FROM m
       WHERE o.id = m.id AND m.owe_refund_if_lost AND NOT (m.id = ANY (v_won)) AND o.status <> m."to" AND o.status = ANY (p_terminal)
      RETURNING o.id, o.status, m.reason)
    INSERT INTO order_events (order_id, type, data)
    SELECT owed.id, 'refund.owed', jsonb_build_object('reason', owed.reason || ' after the order became ' || owed.status) FROM owed;

    -- A charge that lost to an operator's force-confirm: paid twice over, a human must look.
    -- r_flagged tells the caller which orders this call flagged (for its counter and alert line).
    WITH f AS MATERIALIZED (
      SELECT o.id, tcc_flag_attention(o.id, 'capture_on_force_confirmed', jsonb_build_object('paymentId', m.payment_id)) AS flagged
        FROM jsonb_to_recordset(p_moves) AS m(id uuid, "to" text, payment_id text)
        JOIN orders o ON o.id = m.id
       WHERE m.payment_id IS NOT NULL AND NOT (m.id = ANY (v_won)) AND o.status = m."to" AND o.force_confirmed)
    SELECT array_agg(f.id) INTO v_flagged FROM f WHERE f.flagged;
  END IF;

  IF cardinality(v_won) > 0 AND EXISTS (SELECT 1 FROM webhooks) THEN
    PERFORM tcc_emit(e.emit, e.ids)
       FROM (SELECT m.emit, array_agg(m.id) AS ids
               FROM jsonb_to_recordset(p_moves) AS m(id uuid, "to" text, emit text)
               JOIN unnest(v_won, v_prev) AS w(id, previous) ON w.id = m.id
              WHERE m.emit IS NOT NULL AND w.previous <> m."to" GROUP BY m.emit) e;
  END IF;

  RETURN QUERY
    SELECT m.ord::int, m.id, coalesce(m.id = ANY (v_won), false), o.status, w.previous, o.refund_status,
           o.next_action_at, o.refund_next_at, o.confirm_attempts, tcc_order_json(o)::text, coalesce(m.id = ANY (v_flagged), false)
      FROM jsonb_array_elements(p_moves) WITH ORDINALITY AS e(val, ord)
      CROSS JOIN LATERAL (SELECT (e.val->>'id')::uuid AS id, e.ord) m
      LEFT JOIN orders o ON o.id = m.id
      LEFT JOIN unnest(v_won, v_prev) AS w(id, previous) ON w.id = m.id
     ORDER BY m.ord;
END
$fn$`;

/** Net change of orders per status, per statement (see order_counts). */
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

const FUNCTIONS: string[] = [
  // ISO 8601 UTC with milliseconds, exactly as JavaScript's Date#toISOString writes it.
  `CREATE OR REPLACE FUNCTION tcc_iso(ts timestamptz) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
     SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
   $$`,

  // The contract's order JSON, built where the row is: one definition for every answer.
  `CREATE OR REPLACE FUNCTION tcc_order_json(o orders) RETURNS json LANGUAGE sql STABLE AS $$
     SELECT json_build_object(
       'id', o.id, 'transactionId', o.transaction_id, 'customerId', o.customer_id, 'status', o.status,
       'items', o.items,
       'amountMinor', o.amount_minor, 'currency', o.currency,
       'reservationExpiresAt', tcc_iso(o.reservation_expires_at), 'confirmAttempts', o.confirm_attempts,
       'paymentId', o.payment_id, 'failureReason', o.failure_reason,
       'createdAt', tcc_iso(o.created_at), 'updatedAt', tcc_iso(o.updated_at))
   $$`,

  // The webhook outbox: one pending delivery per endpoint subscribed to p_type, carrying the
  // orders as they are now (inside the transaction that changed them). Nothing when nobody listens.
  `CREATE OR REPLACE FUNCTION tcc_emit(p_type text, p_ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
   BEGIN
     IF p_ids IS NULL OR cardinality(p_ids) = 0 OR NOT EXISTS (SELECT 1 FROM webhooks WHERE p_type = ANY (events)) THEN
       RETURN;
     END IF;
     -- One id per event, the same for every endpoint that receives it: the events are made once
     -- (MATERIALIZED), then fanned out.
     WITH e AS MATERIALIZED (
       SELECT gen_random_uuid() AS id, o.id AS order_id,
              json_build_object('type', p_type, 'timestamp', tcc_iso(clock_timestamp()),
                                'data', json_build_object('order', tcc_order_json(o)))::text AS payload
         FROM orders o WHERE o.id = ANY (p_ids))
     INSERT INTO webhook_deliveries (id, webhook_name, type, order_id, payload, next_attempt_at)
     SELECT e.id, w.name, p_type, e.order_id, e.payload, now()
       FROM e CROSS JOIN webhooks w
      WHERE p_type = ANY (w.events);
   END
   $$`,

  ATTENTION,
  TRY_BATCH,
  CLAIM,
  APPLY,
];
