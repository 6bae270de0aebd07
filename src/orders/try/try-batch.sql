-- tcc_try_batch: Try for a batch of orders (TryEngine, try-engine.ts), one call and one
-- transaction; each order all-or-nothing and independent of the others, and orders on one SKU
-- reserve in arrival order. A refused order writes nothing, its Idempotency-Key included.
--
--   1. The judge, on the last committed state and without a lock on any row: per order its
--      Idempotency-Key (a try-lock: a key another transaction is claiming answers
--      IDEMPOTENCY_IN_PROGRESS at once; a key an order holds replays it, or IDEMPOTENCY_KEY_REUSED
--      for another body), then unknown SKUs, one currency, and the stock — an order that does not
--      fit even there is refused at once and never waits for a hot row. With the hold limit on
--      (p_max_holding > 0) only the keys: the limit outranks the stock, judged under the locks.
--      tcc_probe (probe.sql) is this pass alone; test/probe-judge.e2e-spec.ts holds the two to the
--      same answers. With p_snapshot_only nothing more happens: what is left open answers 'retry'.
--   2. What is left open locks its customers (with the hold limit) and its SKU rows in byte order,
--      and is judged again: all at once when every open order fits together (the common case),
--      else one order after the other against what the orders before it left.
--   3. One statement writes every accepted order (its row with lines and key, its barrier row and
--      first event) and moves each SKU by the batch's sum; then the outbox.
--
-- Returns one row per order (1-based r_idx) and one 'stock' row (r_idx 0) per SKU with what is
-- left of it, for the caller's sold-out hints. Lock order, the same everywhere so batches cannot
-- deadlock: Idempotency-Key advisory try-locks, customer advisory locks (sorted), SKU rows (byte
-- order, COLLATE "C").
--
-- Plans pinned (see orders/state/apply-moves.sql). Applied after the migrations, and again
-- whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_try_batch(
  p_keys text[], p_hashes text[], p_customers text[],
  p_line_start int[], p_line_count int[], p_skus text[], p_qty int[],
  p_ttl_ms float8, p_max_holding int, p_holding text[], p_snapshot_only boolean)
RETURNS TABLE (r_idx int, r_outcome text, r_body text, r_sku text, r_requested int, r_available int)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
DECLARE
  n int := coalesce(cardinality(p_keys), 0);
  -- Per order (indexed like p_keys): its outcome, its order's id and JSON, and a refusal's details.
  v_outcome text[];
  v_order_id uuid[];
  v_body text[];
  v_refused_sku text[];
  v_refused_requested int[];
  v_refused_available int[];
  -- An in-batch repeat of an accepted order's key: the index of the order it replays.
  v_replay_of int[] := array_fill(NULL::int, ARRAY[n]);
  -- The locked SKU rows, in byte order, and what is left of each as orders are accepted.
  v_sku text[];
  v_available int[];
  v_price bigint[];
  v_currency text[];
  -- With the hold limit: the open orders' customers (sorted) and how many orders each holds.
  v_customers text[];
  v_holding int[];
  v_all_fit boolean;
  v_accepted int[] := '{}';
  v_accepted_keys text[] := '{}';
  v_created_idx int[];
  v_created_ids uuid[];
  v_created_bodies text[];
  v_order_currency text;
  i int; j int; k int; bad int;
  v_now timestamptz := now();
BEGIN
  IF n = 0 THEN RETURN; END IF;

  -- 1. The judge, on the last committed state, without a lock on any row.
  SELECT array_agg(judged.outcome ORDER BY judged.oi), array_agg(judged.order_id ORDER BY judged.oi), array_agg(judged.body ORDER BY judged.oi),
         array_agg(judged.sku ORDER BY judged.oi), array_agg(judged.requested ORDER BY judged.oi), array_agg(judged.available ORDER BY judged.oi)
    INTO v_outcome, v_order_id, v_body, v_refused_sku, v_refused_requested, v_refused_available
    FROM (
      -- The SKUs the lines name, as last committed.
      WITH stock AS MATERIALIZED (
        SELECT s1.sku, s1.on_hand - s1.reserved AS avail, s1.currency::text AS cur FROM skus s1 WHERE s1.sku = ANY (p_skus)),
      -- Per order, whether its Idempotency-Key is free (this transaction took its advisory try-lock).
      key_claims AS MATERIALIZED (
        SELECT g AS oi, pg_try_advisory_xact_lock(7701, hashtext(p_keys[g])) AS free FROM generate_series(1, cardinality(p_keys)) g),
      -- The orders that hold one of the keys already.
      existing_orders AS (
        SELECT x.idempotency_key AS key, x.request_hash, x.id, tcc_order_json(x)::text AS body FROM orders x WHERE x.idempotency_key = ANY (p_keys)),
      -- Every order's lines with the stock they name (none with the hold limit on: judged under the locks).
      lines AS (
        SELECT kc.oi, ln, p_skus[ln] AS sku, p_qty[ln] AS q, st.sku IS NOT NULL AS found, st.avail, st.cur
          FROM key_claims kc CROSS JOIN LATERAL generate_series(p_line_start[kc.oi], p_line_start[kc.oi] + p_line_count[kc.oi] - 1) ln
          LEFT JOIN stock st ON st.sku = p_skus[ln]
         WHERE p_max_holding = 0),
      -- Per order: its first unknown line, whether its currencies differ, its short SKU with the
      -- smallest byte order.
      verdicts AS (
        SELECT l.oi, min(l.ln) FILTER (WHERE NOT l.found) AS unknown_line, min(l.cur) <> max(l.cur) AS mixed,
               min(l.sku COLLATE "C") FILTER (WHERE l.q > l.avail) AS short_sku
          FROM lines l GROUP BY l.oi)
      -- One row per order: the first refusal that applies (NULL: still open), and a replay's order.
      SELECT kc.oi,
             CASE WHEN NOT kc.free THEN 'IDEMPOTENCY_IN_PROGRESS'
                  WHEN e.request_hash IS NOT NULL THEN CASE WHEN e.request_hash = p_hashes[kc.oi] THEN 'replayed' ELSE 'IDEMPOTENCY_KEY_REUSED' END
                  WHEN v.unknown_line IS NOT NULL THEN 'UNKNOWN_SKU'
                  WHEN v.mixed THEN 'CURRENCY_MISMATCH'
                  WHEN v.short_sku IS NOT NULL THEN 'INSUFFICIENT_STOCK' END AS outcome,
             CASE WHEN kc.free AND e.request_hash = p_hashes[kc.oi] THEN e.id END AS order_id,
             CASE WHEN kc.free AND e.request_hash = p_hashes[kc.oi] THEN e.body END AS body,
             CASE WHEN kc.free AND e.request_hash IS NULL THEN coalesce(p_skus[v.unknown_line], CASE WHEN NOT v.mixed THEN v.short_sku END) END AS sku,
             CASE WHEN kc.free AND e.request_hash IS NULL AND v.unknown_line IS NULL AND NOT v.mixed AND v.short_sku IS NOT NULL THEN
               (SELECT l2.q FROM lines l2 WHERE l2.oi = kc.oi AND l2.sku = v.short_sku LIMIT 1) END AS requested,
             CASE WHEN kc.free AND e.request_hash IS NULL AND v.unknown_line IS NULL AND NOT v.mixed AND v.short_sku IS NOT NULL THEN
               greatest((SELECT s2.avail FROM stock s2 WHERE s2.sku = v.short_sku), 0) END AS available
        FROM key_claims kc LEFT JOIN existing_orders e ON e.key = p_keys[kc.oi] LEFT JOIN verdicts v ON v.oi = kc.oi) judged;

  IF p_snapshot_only THEN
    -- The probe's question only: what the snapshot cannot refuse is left to a normal call.
    FOR i IN 1..n LOOP
      IF v_outcome[i] IS NULL THEN v_outcome[i] := 'retry'; END IF;
    END LOOP;
  ELSIF array_position(v_outcome, NULL) IS NOT NULL THEN
    -- 2. The open orders' customers, with the hold limit: locked in sorted order, and their holding orders counted.
    IF p_max_holding > 0 THEN
      SELECT array_agg(d.c ORDER BY d.c COLLATE "C") INTO v_customers
        FROM (SELECT DISTINCT p_customers[g] AS c FROM generate_series(1, n) g WHERE v_outcome[g] IS NULL) d;
      PERFORM pg_advisory_xact_lock(7702, hashtext(u.c)) FROM unnest(v_customers) WITH ORDINALITY u(c, pos) ORDER BY u.pos;
      SELECT array_agg(coalesce(h.cnt, 0) ORDER BY u.pos) INTO v_holding
        FROM unnest(v_customers) WITH ORDINALITY u(c, pos)
        LEFT JOIN (SELECT o.customer_id, count(*)::int AS cnt FROM orders o
                    WHERE o.customer_id = ANY (v_customers) AND o.status = ANY (p_holding) GROUP BY o.customer_id) h ON h.customer_id = u.c;
    END IF;
    -- The SKU rows of the open orders, locked in byte order, as they are now.
    SELECT array_agg(x.sku ORDER BY x.sku COLLATE "C"), array_agg(x.avail ORDER BY x.sku COLLATE "C"),
           array_agg(x.price_minor ORDER BY x.sku COLLATE "C"), array_agg(x.cur ORDER BY x.sku COLLATE "C")
      INTO v_sku, v_available, v_price, v_currency
      FROM (SELECT s.sku, s.on_hand - s.reserved AS avail, s.price_minor, s.currency::text AS cur
              FROM skus s
             WHERE s.sku = ANY (ARRAY(SELECT p_skus[l] FROM generate_series(1, n) g,
                                        generate_series(p_line_start[g], p_line_start[g] + p_line_count[g] - 1) l WHERE v_outcome[g] IS NULL))
             ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE) x;

    -- The common case, set-based: every open order fits together (each SKU's batch demand within
    -- what is left, every SKU there, one currency per order, each key once). Then all are accepted
    -- and the per-order judgement below, ~20 PL/pgSQL steps an order, is not needed.
    SELECT p_max_holding = 0
           AND (SELECT count(*) = count(DISTINCT p_keys[g]) FROM generate_series(1, n) g WHERE v_outcome[g] IS NULL)
           AND coalesce(bool_and(d.fits), true)
      INTO v_all_fit
      FROM (SELECT array_position(v_sku, l.sku) IS NOT NULL AND sum(l.q) <= v_available[array_position(v_sku, l.sku)] AS fits
              FROM (SELECT p_skus[ln] AS sku, p_qty[ln] AS q FROM generate_series(1, n) g,
                           generate_series(p_line_start[g], p_line_start[g] + p_line_count[g] - 1) ln WHERE v_outcome[g] IS NULL) l
             GROUP BY l.sku
            UNION ALL
            SELECT min(v_currency[array_position(v_sku, p_skus[ln])]) = max(v_currency[array_position(v_sku, p_skus[ln])])
              FROM generate_series(1, n) g, generate_series(p_line_start[g], p_line_start[g] + p_line_count[g] - 1) ln
             WHERE v_outcome[g] IS NULL GROUP BY g) d;
    IF v_all_fit THEN
      SELECT array_agg(g ORDER BY g) INTO v_accepted FROM generate_series(1, n) g WHERE v_outcome[g] IS NULL;
      FOREACH i IN ARRAY v_accepted LOOP v_outcome[i] := 'created'; END LOOP;
    END IF;

    -- Otherwise one open order after the other, in arrival order, against what the ones before it left.
    FOR i IN 1..n LOOP
      CONTINUE WHEN v_all_fit OR v_outcome[i] IS NOT NULL;
      -- A key an earlier order of this batch was accepted with: a replay of it, or a reuse.
      k := array_position(v_accepted_keys, p_keys[i]);
      IF k IS NOT NULL THEN
        IF p_hashes[v_accepted[k]] = p_hashes[i] THEN v_outcome[i] := 'replayed'; v_replay_of[i] := v_accepted[k];
        ELSE v_outcome[i] := 'IDEMPOTENCY_KEY_REUSED';
        END IF;
        CONTINUE;
      END IF;
      -- The hold limit.
      IF p_max_holding > 0 AND v_holding[array_position(v_customers, p_customers[i])] >= p_max_holding THEN
        v_outcome[i] := 'HOLD_LIMIT_REACHED';
        CONTINUE;
      END IF;
      -- The first unknown SKU in line order.
      bad := NULL;
      FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
        IF array_position(v_sku, p_skus[j]) IS NULL THEN bad := j; EXIT; END IF;
      END LOOP;
      IF bad IS NOT NULL THEN v_outcome[i] := 'UNKNOWN_SKU'; v_refused_sku[i] := p_skus[bad]; CONTINUE; END IF;
      -- One currency.
      v_order_currency := v_currency[array_position(v_sku, p_skus[p_line_start[i]])];
      FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
        IF v_currency[array_position(v_sku, p_skus[j])] <> v_order_currency THEN v_outcome[i] := 'CURRENCY_MISMATCH'; EXIT; END IF;
      END LOOP;
      CONTINUE WHEN v_outcome[i] IS NOT NULL;
      -- The short line with the smallest SKU in byte order.
      bad := NULL;
      FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
        k := array_position(v_sku, p_skus[j]);
        IF p_qty[j] > v_available[k] AND (bad IS NULL OR k < array_position(v_sku, p_skus[bad])) THEN bad := j; END IF;
      END LOOP;
      IF bad IS NOT NULL THEN
        k := array_position(v_sku, p_skus[bad]);
        v_outcome[i] := 'INSUFFICIENT_STOCK'; v_refused_sku[i] := p_skus[bad]; v_refused_requested[i] := p_qty[bad]; v_refused_available[i] := greatest(v_available[k], 0);
        CONTINUE;
      END IF;
      -- Accepted: its lines come off what is left.
      FOR j IN p_line_start[i] .. p_line_start[i] + p_line_count[i] - 1 LOOP
        k := array_position(v_sku, p_skus[j]);
        v_available[k] := v_available[k] - p_qty[j];
      END LOOP;
      v_outcome[i] := 'created';
      v_accepted := v_accepted || i;
      v_accepted_keys := v_accepted_keys || p_keys[i];
      IF p_max_holding > 0 THEN
        k := array_position(v_customers, p_customers[i]);
        v_holding[k] := v_holding[k] + 1;
      END IF;
    END LOOP;

    -- 3. Every accepted order, its barrier row and first event, and each SKU by the batch's sum:
    -- one statement (the SKU rows are locked already, in byte order).
    IF cardinality(v_accepted) > 0 THEN
      WITH accepted AS MATERIALIZED (
        SELECT acc.oi, gen_random_uuid() AS id, x.amount, x.cur, x.items
          FROM unnest(v_accepted) AS acc(oi)
          CROSS JOIN LATERAL (
            SELECT sum(p_qty[l.lj]::bigint * v_price[array_position(v_sku, p_skus[l.lj])]) AS amount,
                   min(v_currency[array_position(v_sku, p_skus[l.lj])]) AS cur,
                   jsonb_agg(jsonb_build_object('sku', p_skus[l.lj], 'quantity', p_qty[l.lj], 'unitPriceMinor', v_price[array_position(v_sku, p_skus[l.lj])])
                             ORDER BY p_skus[l.lj] COLLATE "C") AS items
              FROM generate_series(p_line_start[acc.oi], p_line_start[acc.oi] + p_line_count[acc.oi] - 1) AS l(lj)) x),
      inserted AS (
        INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key,
                            items, idempotency_key, request_hash, created_at, updated_at)
        SELECT a.id, 'tcc-' || a.id, p_customers[a.oi], 'TRY_SUCCESS', a.amount, a.cur,
               v_now + make_interval(secs => p_ttl_ms / 1000), 'charge-' || a.id, a.items, p_keys[a.oi], p_hashes[a.oi], v_now, v_now
          FROM accepted a
        RETURNING id, tcc_order_json(orders)::text AS body),
      barrier_rows AS (INSERT INTO tcc_barrier (transaction_id, op, reason) SELECT 'tcc-' || a.id, 'try', 'try' FROM accepted a),
      first_events AS (INSERT INTO order_events (order_id, type, data)
                       SELECT a.id, 'status.changed', '{"from": null, "to": "TRY_SUCCESS", "reason": "stock reserved"}'::jsonb FROM accepted a),
      demand AS (SELECT p_skus[l.lj] AS sku, sum(p_qty[l.lj])::int AS q
                   FROM accepted a, generate_series(p_line_start[a.oi], p_line_start[a.oi] + p_line_count[a.oi] - 1) AS l(lj) GROUP BY 1),
      reserved_stock AS (UPDATE skus s SET reserved = s.reserved + (SELECT d.q FROM demand d WHERE d.sku = s.sku), updated_at = v_now
                          WHERE s.sku = ANY (ARRAY(SELECT d.sku FROM demand d)))
      SELECT array_agg(a.oi), array_agg(ins.id), array_agg(ins.body) INTO v_created_idx, v_created_ids, v_created_bodies
        FROM inserted ins JOIN accepted a ON a.id = ins.id;
      -- Each created order's id, and the id of the order an in-batch repeat of its key replays.
      SELECT array_agg(coalesce(v_created_ids[array_position(v_created_idx, coalesce(v_replay_of[g], g))], v_order_id[g]) ORDER BY g) INTO v_order_id
        FROM generate_series(1, n) g;
      -- The outbox (tcc_emit, webhooks/outbox.sql), only when an endpoint exists at all.
      IF EXISTS (SELECT 1 FROM webhooks) THEN
        PERFORM tcc_emit('order.reserved', v_created_ids);
      END IF;
    END IF;
  END IF;

  -- One row per order, then what is left of every SKU the batch named.
  RETURN QUERY
    SELECT g, v_outcome[g],
           CASE WHEN v_outcome[g] IN ('created', 'replayed') THEN coalesce(v_body[g], v_created_bodies[array_position(v_created_ids, v_order_id[g])]) END,
           v_refused_sku[g], v_refused_requested[g], v_refused_available[g]
      FROM generate_series(1, n) g
    UNION ALL
    SELECT 0, 'stock'::text, NULL::text, s.sku, NULL::int, s.on_hand - s.reserved FROM skus s WHERE s.sku = ANY (p_skus);
END
$fn$;
