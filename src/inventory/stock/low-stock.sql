-- tcc_low_stock: low stock (API.md, "Low stock"). A SKU whose available falls from above its
-- threshold to at or below it is flagged (skus.low_stock) and announced once (inventory.low_stock,
-- through tcc_emit_inventory, in this transaction); the flag clears once available is above the
-- threshold again, so the next fall is announced too. Called after a change of these SKUs' stock
-- by whoever holds their SKU rows (the guard of their stock): a Try batch, a release, a set, an
-- adjustment, an import, an outside branch. Only SKUs with a threshold, or flagged, are looked at.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_low_stock(p_skus text[]) RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $fn$
DECLARE
  v_fell text[];
BEGIN
  WITH watched AS (
    SELECT s.sku, s.low_stock_threshold AS threshold
      FROM skus s WHERE s.sku = ANY (p_skus) AND (s.low_stock_threshold > 0 OR s.low_stock)),
  -- Whether each is low now: available (its active locations' max(0, on hand - reserved - safety
  -- stock)) at or below a threshold above 0.
  now_low AS (
    SELECT w.sku, w.threshold > 0
             AND coalesce(sum(greatest(st.on_hand - st.reserved - st.safety_stock, 0)) FILTER (WHERE l.active), 0) <= w.threshold AS low
      FROM watched w LEFT JOIN stock st ON st.sku = ANY (p_skus) AND st.sku = w.sku LEFT JOIN locations l ON l.id = st.location_id
     GROUP BY w.sku, w.threshold),
  flipped AS (
    UPDATE skus s SET low_stock = n.low, updated_at = now()
      FROM now_low n
     WHERE s.sku = n.sku AND s.low_stock <> n.low
    RETURNING s.sku, s.low_stock)
  SELECT array_agg(f.sku ORDER BY f.sku COLLATE "C") FILTER (WHERE f.low_stock) INTO v_fell FROM flipped f;
  IF v_fell IS NOT NULL THEN
    PERFORM tcc_emit_inventory('inventory.low_stock', v_fell);
  END IF;
END
$fn$;
