-- tcc_probe: the sold-out probe. TryEngine (try-engine.ts) sends a Try here when what it last saw
-- of a SKU cannot fit it. It judges as tcc_try_batch's judge does (tcc_judge_trys, judge-trys.sql),
-- on the last committed state with no lock on any row, so a refusal never queues behind a hot
-- SKU's row lock; an order the judge leaves open answers 'retry' and takes tcc_try_batch. Then one
-- 'stock' row (r_idx 0) per known SKU named, with what the snapshot saw of it. Each line and each
-- allowed location names its order (1-based).
--
-- A batch of the common shape on a sold-out SKU — one line per order, in order, and no allowed
-- locations — is judged by one statement of its own, the judge's rules for that shape only: the
-- key busy, then a replay or a reused key, then an unknown SKU, then a line its SKU's active
-- locations cannot hold. Mixed currencies and unknown locations cannot arise in that shape. The
-- general judge's plan (allowed locations, lines per order, currencies) cost about twice as much
-- Postgres time per refusal (BENCHMARKS.md); every other batch goes to it. Both answer alike:
-- test/medium/probe-judge.spec.ts holds both against tcc_try_batch on the same state.
--
-- Plans pinned (see orders/state/apply-moves.sql). Applied after the migrations, and again
-- whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_probe(
  p_keys text[], p_hashes text[], p_line_order int[], p_skus text[], p_quantities int[],
  p_location_order int[], p_locations text[])
RETURNS TABLE (r_idx int, r_outcome text, r_body text, r_sku text, r_requested int, r_available int, r_location text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
DECLARE
  v_n int := cardinality(p_keys);
  v_simple boolean := cardinality(p_locations) = 0 AND cardinality(p_line_order) = cardinality(p_keys);
  v_key_free boolean[];
BEGIN
  IF v_simple THEN
    FOR i IN 1 .. v_n LOOP
      IF p_line_order[i] IS DISTINCT FROM i THEN
        v_simple := false;
        EXIT;
      END IF;
    END LOOP;
  END IF;

  IF NOT v_simple THEN
    RETURN QUERY
    SELECT j.r_idx, coalesce(j.r_outcome, 'retry'), j.r_body, j.r_sku, j.r_requested, j.r_available, j.r_location
      FROM tcc_judge_trys(p_keys, p_hashes, p_line_order, p_skus, p_quantities, p_location_order, p_locations, true) j;
    RETURN;
  END IF;

  -- As the judge: each key try-locked, never waited for, in a statement of its own.
  v_key_free := tcc_try_lock_keys(p_keys);

  RETURN QUERY
  WITH facts AS MATERIALIZED (
    SELECT s.sku,
           least((SELECT coalesce(sum(greatest(st.on_hand - st.reserved - st.safety_stock, 0)), 0)
                    FROM stock st JOIN locations l ON l.id = st.location_id
                   WHERE st.sku = s.sku AND l.active), 2147483647)::int AS free
      FROM skus s WHERE s.sku = ANY (p_skus)),
  judged AS (
    SELECT u.ord::int AS oi, u.sku, u.quantity, v_key_free[u.ord] AS key_free, o.request_hash,
           o.request_hash = p_hashes[u.ord] AS same_body,
           CASE WHEN o.request_hash = p_hashes[u.ord] THEN tcc_order_json(o)::text END AS body,
           f.sku IS NOT NULL AS known, f.free
      FROM unnest(p_skus, p_quantities) WITH ORDINALITY AS u(sku, quantity, ord)
      LEFT JOIN orders o ON o.idempotency_key = p_keys[u.ord]
      LEFT JOIN facts f ON f.sku = u.sku)
  SELECT j.oi,
         CASE WHEN NOT j.key_free THEN 'IDEMPOTENCY_IN_PROGRESS'
              WHEN j.request_hash IS NOT NULL THEN CASE WHEN j.same_body THEN 'replayed' ELSE 'IDEMPOTENCY_KEY_REUSED' END
              WHEN NOT j.known THEN 'UNKNOWN_SKU'
              WHEN j.quantity > j.free THEN 'INSUFFICIENT_STOCK'
              ELSE 'retry' END,
         CASE WHEN j.key_free THEN j.body END,
         CASE WHEN j.key_free AND j.request_hash IS NULL AND (NOT j.known OR j.quantity > j.free) THEN j.sku END,
         CASE WHEN j.key_free AND j.request_hash IS NULL AND j.known AND j.quantity > j.free THEN j.quantity END,
         CASE WHEN j.key_free AND j.request_hash IS NULL AND j.known AND j.quantity > j.free THEN j.free END,
         NULL::text
    FROM judged j
  UNION ALL
  SELECT 0, 'stock', NULL, f.sku, NULL, f.free, NULL FROM facts f;
END
$fn$;
