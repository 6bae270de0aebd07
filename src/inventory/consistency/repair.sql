-- tcc_inventory_repair: repairs what the check (tcc_inventory_consistency) finds: each mismatched row's reserved becomes what is held there, and
-- where on hand and the ledger disagree, a 'repair' movement of on_hand - ledger (on hand, the
-- physical count, stands). The SKU rows are locked in byte order first and the rows judged again
-- under the locks, so a repair never undoes a change that committed since the caller's check.
-- A row holding more than it has on hand cannot be repaired here (r_repaired false): its on hand
-- must be set first. Returns the mismatches as found under the locks, before the repair.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_inventory_repair(p_skus text[], p_holding text[], p_reason text, p_actor text, p_operator text)
RETURNS TABLE (r_sku text, r_location text, r_reserved int, r_held int, r_on_hand int, r_ledger int, r_repaired boolean)
LANGUAGE plpgsql
AS $fn$
BEGIN
  PERFORM 1 FROM skus s WHERE s.sku = ANY (p_skus) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE;
  RETURN QUERY
  WITH found AS MATERIALIZED (
    SELECT c.* FROM tcc_inventory_consistency(p_holding) c WHERE c.r_mismatch AND c.r_sku = ANY (p_skus)),
  fixed AS (
    UPDATE stock st SET reserved = f.r_held, updated_at = now()
      FROM found f WHERE st.sku = ANY (p_skus) AND st.sku = f.r_sku AND st.location_id = f.r_location AND st.reserved <> f.r_held AND f.r_held <= f.r_on_hand),
  recorded AS (
    INSERT INTO stock_movements (sku, location_id, kind, delta, on_hand_after, reason, actor, operator)
    SELECT f.r_sku, f.r_location, 'repair', f.r_on_hand - f.r_ledger, f.r_on_hand, p_reason, p_actor, p_operator
      FROM found f WHERE f.r_on_hand <> f.r_ledger
     ORDER BY f.r_sku COLLATE "C", f.r_location COLLATE "C")
  SELECT f.r_sku, f.r_location, f.r_reserved, f.r_held, f.r_on_hand, f.r_ledger, f.r_held <= f.r_on_hand FROM found f
   ORDER BY f.r_sku COLLATE "C", f.r_location COLLATE "C";
END
$fn$;
