-- tcc_inventory_repair: repairs what the check (tcc_inventory_consistency) finds: each mismatched row's reserved becomes what is held there, and
-- where on hand and the ledger disagree, a 'repair' movement of on_hand - ledger (on hand, the
-- physical count, stands), recorded by tcc_record_movements. The SKU rows are locked in byte order first and the rows judged again
-- under the locks, so a repair never undoes a change that committed since the caller's check.
-- A row holding more than it has on hand cannot be repaired here (r_repaired false): its on hand
-- must be set first. Low stock is judged again for the SKUs repaired (tcc_low_stock). Returns the
-- mismatches as found under the locks, before the repair.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_inventory_repair(p_skus text[], p_holding text[], p_reason text, p_actor text, p_operator text)
RETURNS TABLE (r_sku text, r_location text, r_reserved int, r_held int, r_on_hand int, r_ledger int, r_repaired boolean)
LANGUAGE plpgsql
AS $fn$
DECLARE
  -- The mismatches as found under the locks, in (SKU, location) byte order.
  v_sku text[];
  v_location text[];
  v_reserved int[];
  v_held int[];
  v_on_hand int[];
  v_ledger int[];
  v_move int[];
BEGIN
  PERFORM 1 FROM skus s WHERE s.sku = ANY (p_skus) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE;
  SELECT coalesce(array_agg(c.r_sku ORDER BY c.r_sku COLLATE "C", c.r_location COLLATE "C"), '{}'),
         array_agg(c.r_location ORDER BY c.r_sku COLLATE "C", c.r_location COLLATE "C"),
         array_agg(c.r_reserved ORDER BY c.r_sku COLLATE "C", c.r_location COLLATE "C"),
         array_agg(c.r_held ORDER BY c.r_sku COLLATE "C", c.r_location COLLATE "C"),
         array_agg(c.r_on_hand ORDER BY c.r_sku COLLATE "C", c.r_location COLLATE "C"),
         array_agg(c.r_ledger ORDER BY c.r_sku COLLATE "C", c.r_location COLLATE "C")
    INTO v_sku, v_location, v_reserved, v_held, v_on_hand, v_ledger
    FROM tcc_inventory_consistency(p_holding) c WHERE c.r_mismatch AND c.r_sku = ANY (p_skus);
  UPDATE stock st SET reserved = f.held, updated_at = now()
    FROM unnest(v_sku, v_location, v_held, v_on_hand) AS f(sku, location_id, held, on_hand)
   WHERE st.sku = ANY (p_skus) AND st.sku = f.sku AND st.location_id = f.location_id AND st.reserved <> f.held AND f.held <= f.on_hand;
  -- What is reserved moved, so what is available did: low stock is judged again (a flag left set
  -- by a leaked reservation would keep the next fall silent).
  IF cardinality(v_sku) > 0 THEN
    PERFORM tcc_low_stock(ARRAY(SELECT DISTINCT u.sku FROM unnest(v_sku) AS u(sku)));
  END IF;
  -- Where on hand and the ledger disagree, a movement (the ledger's one writer) of the difference.
  SELECT array_agg(i ORDER BY i) INTO v_move FROM generate_subscripts(v_sku, 1) i WHERE v_on_hand[i] <> v_ledger[i];
  IF v_move IS NOT NULL THEN
    PERFORM 1 FROM tcc_record_movements('repair',
      ARRAY(SELECT v_sku[i] FROM unnest(v_move) WITH ORDINALITY AS u(i, o) ORDER BY o),
      ARRAY(SELECT v_location[i] FROM unnest(v_move) WITH ORDINALITY AS u(i, o) ORDER BY o),
      ARRAY(SELECT v_on_hand[i] - v_ledger[i] FROM unnest(v_move) WITH ORDINALITY AS u(i, o) ORDER BY o),
      ARRAY(SELECT v_on_hand[i] FROM unnest(v_move) WITH ORDINALITY AS u(i, o) ORDER BY o),
      NULL, array_fill(p_actor, ARRAY[cardinality(v_move)]), array_fill(p_operator, ARRAY[cardinality(v_move)]), p_reason, NULL, NULL);
  END IF;
  RETURN QUERY
  SELECT f.sku, f.location_id, f.reserved, f.held, f.on_hand, f.ledger, f.held <= f.on_hand
    FROM unnest(v_sku, v_location, v_reserved, v_held, v_on_hand, v_ledger) WITH ORDINALITY AS f(sku, location_id, reserved, held, on_hand, ledger, o)
   ORDER BY f.o;
END
$fn$;
