-- tcc_judge_trys: the judge of a batch of Trys, on the last committed state and without a lock on any row: the
-- first steps of tcc_try_batch, and all of the sold-out probe (tcc_probe). Each line and each
-- allowed location names its order (1-based; an order with no allowed locations may use any).
--  1. Each order's Idempotency-Key is try-locked (tcc_try_lock_keys, never waited for): a key another
--     transaction is claiming right now is IDEMPOTENCY_IN_PROGRESS. A statement of its own, so that the
--     judgement below, on a later snapshot, sees every order whose key holder committed before we got the key.
--  2. Per order: a replay (same key and body: 'replayed' with that order) or reuse of a key; unless
--     p_judge_stock is false, the first unknown SKU, an unknown location, mixed currencies, and a
--     line its allowed locations cannot hold even now (INSUFFICIENT_STOCK: the stock did not exist
--     when this ran, so the refusal needs no lock). An order left open has outcome NULL.
-- The stock judged is each active location's max(0, onHand - reserved - safetyStock); a SKU's sum
-- over its locations can pass 2^31 (1e9 a location), so it is capped there: no line asks that much. Also returns
-- one 'stock' row (r_idx 0) per known SKU named, with what all its active locations hold.
--
-- Plans pinned (see orders/state/apply-moves.sql). Applied after the migrations, and again
-- whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_judge_trys(
  p_keys text[], p_hashes text[], p_line_order int[], p_skus text[], p_quantities int[],
  p_location_order int[], p_locations text[], p_judge_stock boolean)
RETURNS TABLE (r_idx int, r_outcome text, r_order_id uuid, r_body text, r_sku text, r_requested int, r_available int, r_location text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
DECLARE
  v_key_free boolean[];
BEGIN
  v_key_free := tcc_try_lock_keys(p_keys);

  RETURN QUERY
  WITH stock_rows AS MATERIALIZED (
    SELECT st.sku, st.location_id, greatest(st.on_hand - st.reserved - st.safety_stock, 0) AS free
      FROM stock st JOIN locations l ON l.id = st.location_id
     WHERE p_judge_stock AND st.sku = ANY (p_skus) AND l.active),
  sku_facts AS MATERIALIZED (
    SELECT s.sku, s.currency::text AS currency, least((SELECT coalesce(sum(sr.free), 0) FROM stock_rows sr WHERE sr.sku = s.sku), 2147483647)::int AS free
      FROM skus s WHERE p_judge_stock AND s.sku = ANY (p_skus)),
  allowed AS (SELECT u.oi, u.location_id FROM unnest(p_location_order, p_locations) AS u(oi, location_id)),
  line_supply AS (
    SELECT l.oi, l.ln, l.sku, l.quantity, sf.sku IS NOT NULL AS known, sf.currency,
           CASE WHEN NOT EXISTS (SELECT 1 FROM allowed a WHERE a.oi = l.oi) THEN sf.free
                ELSE least((SELECT coalesce(sum(sr.free), 0) FROM stock_rows sr JOIN allowed a ON a.oi = l.oi AND a.location_id = sr.location_id
                             WHERE sr.sku = l.sku), 2147483647)::int END AS supply
      FROM unnest(p_line_order, p_skus, p_quantities) WITH ORDINALITY AS l(oi, sku, quantity, ln)
      LEFT JOIN sku_facts sf ON sf.sku = l.sku
     WHERE p_judge_stock),
  -- Per order: its first unknown line, whether its currencies differ, and its short line with the
  -- smallest SKU in byte order (a SKU appears once per order).
  line_verdict AS (
    SELECT ls.oi, min(ls.ln) FILTER (WHERE NOT ls.known) AS unknown_line, min(ls.currency) <> max(ls.currency) AS mixed,
           min(ls.sku COLLATE "C") FILTER (WHERE ls.quantity > ls.supply) AS short_sku,
           (array_agg(ls.quantity ORDER BY ls.sku COLLATE "C") FILTER (WHERE ls.quantity > ls.supply))[1] AS short_quantity,
           (array_agg(ls.supply ORDER BY ls.sku COLLATE "C") FILTER (WHERE ls.quantity > ls.supply))[1] AS short_supply
      FROM line_supply ls GROUP BY ls.oi),
  unknown_location AS (
    SELECT a.oi, min(a.location_id COLLATE "C") AS location_id
      FROM allowed a WHERE p_judge_stock AND NOT EXISTS (SELECT 1 FROM locations l WHERE l.id = a.location_id) GROUP BY a.oi),
  existing AS (
    SELECT o.idempotency_key AS key, o.request_hash, o.id, tcc_order_json(o)::text AS body FROM orders o WHERE o.idempotency_key = ANY (p_keys)),
  verdict AS (
    SELECT g AS oi, v_key_free[g] AS free, e.request_hash, e.request_hash = p_hashes[g] AS same_body, e.id, e.body,
           lv.unknown_line, ul.location_id AS unknown_location, lv.mixed, lv.short_sku, lv.short_quantity, lv.short_supply,
           e.request_hash IS NULL AND lv.unknown_line IS NULL AND ul.location_id IS NULL AND NOT lv.mixed AS stock_decides
      FROM generate_series(1, cardinality(p_keys)) g
      LEFT JOIN existing e ON e.key = p_keys[g]
      LEFT JOIN line_verdict lv ON lv.oi = g
      LEFT JOIN unknown_location ul ON ul.oi = g)
  SELECT v.oi,
         CASE WHEN NOT v.free THEN 'IDEMPOTENCY_IN_PROGRESS'
              WHEN v.request_hash IS NOT NULL THEN CASE WHEN v.same_body THEN 'replayed' ELSE 'IDEMPOTENCY_KEY_REUSED' END
              WHEN v.unknown_line IS NOT NULL THEN 'UNKNOWN_SKU'
              WHEN v.unknown_location IS NOT NULL THEN 'UNKNOWN_LOCATION'
              WHEN v.mixed THEN 'CURRENCY_MISMATCH'
              WHEN v.short_sku IS NOT NULL THEN 'INSUFFICIENT_STOCK' END,
         CASE WHEN v.free AND v.same_body THEN v.id END,
         CASE WHEN v.free AND v.same_body THEN v.body END,
         CASE WHEN v.free AND v.request_hash IS NULL THEN coalesce(p_skus[v.unknown_line], CASE WHEN v.unknown_location IS NULL AND NOT v.mixed THEN v.short_sku END) END,
         CASE WHEN v.free AND v.stock_decides THEN v.short_quantity END,
         CASE WHEN v.free AND v.stock_decides THEN v.short_supply END,
         CASE WHEN v.free AND v.request_hash IS NULL AND v.unknown_line IS NULL THEN v.unknown_location END
    FROM verdict v
  UNION ALL
  -- What the snapshot holds of every known SKU named (all active locations): the caller's hints.
  SELECT 0, 'stock', NULL, NULL, sf.sku, NULL, sf.free, NULL FROM sku_facts sf;
END
$fn$;
