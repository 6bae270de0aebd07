-- tcc_probe: the sold-out probe. TryEngine (try-engine.ts) sends a Try here when what it last saw
-- of a SKU cannot fit it. It is tcc_try_batch's judge alone (tcc_judge_trys, judge-trys.sql, or for
-- a batch of the common shape tcc_judge_one_line, as tcc_try_batch chooses), on the last committed
-- state with no lock on any row, so a refusal never queues behind a hot SKU's row lock; an order
-- the judge leaves open answers 'retry' and takes tcc_try_batch. Then one
-- 'stock' row (r_idx 0) per SKU with what the snapshot saw of it. Each line and each allowed
-- location names its order (1-based).
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
  v_one_line boolean := tcc_one_line_shape(p_keys, p_line_order, p_locations);
  v_key_free boolean[];
BEGIN
  -- Two statements, each planned on its first use: a batch plans and runs only its own judge's.
  IF NOT v_one_line THEN
    RETURN QUERY
    SELECT j.r_idx, coalesce(j.r_outcome, 'retry'), j.r_body, j.r_sku, j.r_requested, j.r_available, j.r_location
      FROM tcc_judge_trys(p_keys, p_hashes, p_line_order, p_skus, p_quantities, p_location_order, p_locations, true) j;
    RETURN;
  END IF;
  -- The common shape's judge takes its keys' locks from here (the general judge takes its own).
  v_key_free := tcc_try_lock_keys(p_keys);
  RETURN QUERY
  SELECT j.r_idx, coalesce(j.r_outcome, 'retry'), j.r_body, j.r_sku, j.r_requested, j.r_available, j.r_location
    FROM tcc_judge_one_line(v_key_free, p_keys, p_hashes, p_skus, p_quantities) j;
END
$fn$;
