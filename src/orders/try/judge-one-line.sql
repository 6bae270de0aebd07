-- tcc_judge_one_line: tcc_judge_trys (judge-trys.sql) for a batch of the common shape alone — one
-- line per order, in order, no allowed locations (tcc_one_line_shape, which the caller checks),
-- which is every Try of a checkout that names no store. The same answers, row for row, from one
-- query: the key busy (p_key_free: the caller's tcc_try_lock_keys, a statement before this one),
-- then a replay or a reused key, then an unknown SKU, then a line its SKU's active locations cannot
-- hold (INSUFFICIENT_STOCK with what they hold); mixed currencies and unknown locations cannot arise
-- in this shape. An order left open has outcome NULL; then one 'stock' row (r_idx 0) per known SKU
-- named. The general judge's plan, built for allowed locations, lines per order and currencies,
-- cost as much Postgres time again as the work (BENCHMARKS.md).
--
-- A plain SQL query, STABLE and without SET clauses, so Postgres inlines it into the caller's
-- statement (tcc_try_batch, tcc_probe: their pinned plan settings apply) rather than calling a
-- function per batch. test/medium/probe-judge.spec.ts holds it to the general judge on random
-- batches, and checks that both callers take it for this shape only.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_judge_one_line(p_key_free boolean[], p_keys text[], p_hashes text[], p_skus text[], p_quantities int[])
RETURNS TABLE (r_idx int, r_outcome text, r_order_id uuid, r_body text, r_sku text, r_requested int, r_available int, r_location text)
LANGUAGE sql STABLE
AS $fn$
  WITH facts AS MATERIALIZED (
    SELECT s.sku,
           least((SELECT coalesce(sum(greatest(st.on_hand - st.reserved - st.safety_stock, 0)), 0)
                    FROM stock st JOIN locations l ON l.id = st.location_id
                   WHERE st.sku = s.sku AND l.active), 2147483647)::int AS free
      FROM skus s WHERE s.sku = ANY (p_skus)),
  judged AS (
    SELECT u.ord::int AS oi, u.sku, u.quantity, p_key_free[u.ord] AS key_free, o.request_hash,
           o.request_hash = p_hashes[u.ord] AS same_body, o.id AS order_id,
           CASE WHEN o.request_hash = p_hashes[u.ord] THEN tcc_order_json(o)::text END AS body,
           f.sku IS NOT NULL AS known, f.free
      FROM unnest(p_skus, p_quantities) WITH ORDINALITY AS u(sku, quantity, ord)
      LEFT JOIN orders o ON o.idempotency_key = p_keys[u.ord]
      LEFT JOIN facts f ON f.sku = u.sku)
  SELECT j.oi,
         CASE WHEN NOT j.key_free THEN 'IDEMPOTENCY_IN_PROGRESS'
              WHEN j.request_hash IS NOT NULL THEN CASE WHEN j.same_body THEN 'replayed' ELSE 'IDEMPOTENCY_KEY_REUSED' END
              WHEN NOT j.known THEN 'UNKNOWN_SKU'
              WHEN j.quantity > j.free THEN 'INSUFFICIENT_STOCK' END,
         CASE WHEN j.key_free AND j.same_body THEN j.order_id END,
         CASE WHEN j.key_free THEN j.body END,
         CASE WHEN j.key_free AND j.request_hash IS NULL AND (NOT j.known OR j.quantity > j.free) THEN j.sku END,
         CASE WHEN j.key_free AND j.request_hash IS NULL AND j.known AND j.quantity > j.free THEN j.quantity END,
         CASE WHEN j.key_free AND j.request_hash IS NULL AND j.known AND j.quantity > j.free THEN j.free END,
         NULL::text
    FROM judged j
  UNION ALL
  SELECT 0, 'stock', NULL::uuid, NULL::text, f.sku, NULL::int, f.free, NULL::text FROM facts f
$fn$;
