-- tcc_probe: the sold-out probe. It judges a batch of Trys as tcc_try_batch's first pass does —
-- on the last committed state, with no lock on any row — so a refusal never queues behind a hot
-- SKU's row lock. TryEngine (try-engine.ts) sends a Try here when what it last saw of a SKU cannot
-- fit it; one a snapshot cannot refuse comes back 'retry' and takes tcc_try_batch.
--
-- Per order (1-based r_idx), the first that applies: its Idempotency-Key being claimed right now
-- (IDEMPOTENCY_IN_PROGRESS); a key an order already holds ('replayed' with that order's JSON, or
-- IDEMPOTENCY_KEY_REUSED); the first unknown SKU in line order; mixed currencies; the short line
-- with the smallest SKU in byte order (INSUFFICIENT_STOCK, with its requested and available);
-- else 'retry'. Then one 'stock' row (r_idx 0) per SKU with what the snapshot saw of it.
-- Each line names its order (p_line_order). test/probe-judge.e2e-spec.ts holds this function and
-- tcc_try_batch's first pass to the same answers.
--
-- Plans pinned (see apply-moves.sql). Applied after the migrations, and again whenever this file
-- changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_probe(p_keys text[], p_hashes text[], p_line_order int[], p_skus text[], p_qty int[])
RETURNS TABLE (r_idx int, r_outcome text, r_body text, r_sku text, r_requested int, r_available int)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
BEGIN
  RETURN QUERY
  -- The SKUs the lines name, as last committed.
  WITH stock AS MATERIALIZED (
    SELECT s.sku, s.on_hand - s.reserved AS avail, s.currency::text AS cur FROM skus s WHERE s.sku = ANY (p_skus)),
  -- Per order: its first unknown line, whether its currencies differ, and its short line with the
  -- smallest SKU in byte order, with that line's quantity and stock (a SKU appears once per order:
  -- the API refuses repeats).
  verdicts AS (
    SELECT l.oi, min(l.ln) FILTER (WHERE st.sku IS NULL) AS unknown_line, min(st.cur) <> max(st.cur) AS mixed,
           min(l.sku COLLATE "C") FILTER (WHERE l.q > st.avail) AS short_sku,
           (array_agg(l.q ORDER BY l.sku COLLATE "C") FILTER (WHERE l.q > st.avail))[1] AS short_q,
           (array_agg(st.avail ORDER BY l.sku COLLATE "C") FILTER (WHERE l.q > st.avail))[1] AS short_avail
      FROM unnest(p_line_order, p_skus, p_qty) WITH ORDINALITY AS l(oi, sku, q, ln) LEFT JOIN stock st ON st.sku = l.sku
     GROUP BY l.oi),
  -- Per order, whether its Idempotency-Key is free: this transaction took its advisory lock (a
  -- try-lock, so a key another transaction is claiming is never waited for).
  key_claims AS MATERIALIZED (
    SELECT g AS oi, pg_try_advisory_xact_lock(7701, hashtext(p_keys[g])) AS free FROM generate_series(1, cardinality(p_keys)) g),
  -- The orders that hold one of the keys already.
  existing_orders AS (
    SELECT x.idempotency_key AS key, x.request_hash, tcc_order_json(x)::text AS body FROM orders x WHERE x.idempotency_key = ANY (p_keys))
  -- One row per order: its outcome, the replayed order's JSON, the refusal's SKU, requested and available.
  SELECT k.oi,
         CASE WHEN NOT k.free THEN 'IDEMPOTENCY_IN_PROGRESS'
              WHEN e.request_hash IS NOT NULL THEN CASE WHEN e.request_hash = p_hashes[k.oi] THEN 'replayed' ELSE 'IDEMPOTENCY_KEY_REUSED' END
              WHEN v.unknown_line IS NOT NULL THEN 'UNKNOWN_SKU'
              WHEN v.mixed THEN 'CURRENCY_MISMATCH'
              WHEN v.short_sku IS NOT NULL THEN 'INSUFFICIENT_STOCK'
              ELSE 'retry' END,
         CASE WHEN k.free AND e.request_hash = p_hashes[k.oi] THEN e.body END,
         CASE WHEN k.free AND e.request_hash IS NULL THEN coalesce(p_skus[v.unknown_line], CASE WHEN NOT v.mixed THEN v.short_sku END) END,
         CASE WHEN k.free AND e.request_hash IS NULL AND v.unknown_line IS NULL AND NOT v.mixed THEN v.short_q END,
         CASE WHEN k.free AND e.request_hash IS NULL AND v.unknown_line IS NULL AND NOT v.mixed AND v.short_sku IS NOT NULL
              THEN greatest(v.short_avail, 0) END
    FROM key_claims k LEFT JOIN existing_orders e ON e.key = p_keys[k.oi] LEFT JOIN verdicts v ON v.oi = k.oi
  UNION ALL
  -- What the snapshot saw of every SKU, for the caller's sold-out hints.
  SELECT 0, 'stock', NULL, st.sku, NULL, st.avail FROM stock st;
END
$fn$;
