-- tcc_location_put: creates or changes a location (PUT /admin/locations/{id}). What a SKU has
-- available counts its active locations only, so switching a location on or off moves the
-- available of every SKU held there: each of those that low stock watches (a threshold, or
-- flagged low) is judged again (tcc_low_stock, API.md "Low stock"). One that falls to its
-- threshold or below is announced, in this transaction; one that rises above it is cleared, so
-- its next fall (a Try, a sale) is announced too — without this, a flag left set by a location
-- switched back on kept that next fall silent.
--
-- The location row first (created, or locked and changed: its previous state read under the lock);
-- then the watched SKU rows in byte order, the guard of their stock that every writer of stock
-- takes, and the judgement in a later statement: a writer that held one of them committed before
-- it and is judged over; one that waits for it judges after this commits, with the location as
-- it is now. Only the watched SKUs are locked, so switching a large location holds no SKU a
-- threshold does not name. Two narrow races remain, each judged right at the SKU's next change:
-- a SKU given its first threshold, or its first stock row at this location, by a transaction that
-- commits while this one runs (neither is seen by this one's choice of SKUs, and each judged with
-- the location as it was).
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_location_put(p_id text, p_name text, p_priority int, p_active boolean)
RETURNS TABLE (r_id text, r_name text, r_priority int, r_active boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
DECLARE
  v_created boolean;
  v_was boolean;
  v_skus text[];
BEGIN
  INSERT INTO locations (id, name, priority, active) VALUES (p_id, p_name, p_priority, p_active)
  ON CONFLICT (id) DO NOTHING RETURNING true INTO v_created;
  IF v_created IS NULL THEN
    SELECT l.active INTO v_was FROM locations l WHERE l.id = p_id FOR NO KEY UPDATE;
    UPDATE locations l SET name = p_name, priority = p_priority, active = p_active, updated_at = now() WHERE l.id = p_id;
  END IF;

  -- A location just created holds no stock yet: nothing to judge.
  IF v_was IS DISTINCT FROM p_active AND v_created IS NULL THEN
    WITH watched AS (
      SELECT s.sku FROM skus s
       WHERE (s.low_stock_threshold > 0 OR s.low_stock)
         AND EXISTS (SELECT 1 FROM stock st WHERE st.sku = s.sku AND st.location_id = p_id)
       ORDER BY s.sku COLLATE "C"
         FOR NO KEY UPDATE OF s)
    SELECT array_agg(w.sku ORDER BY w.sku COLLATE "C") INTO v_skus FROM watched w;
    IF v_skus IS NOT NULL THEN
      PERFORM tcc_low_stock(v_skus);
    END IF;
  END IF;

  RETURN QUERY SELECT l.id, l.name, l.priority, l.active FROM locations l WHERE l.id = p_id;
END
$fn$;
