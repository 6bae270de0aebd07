-- tcc_branch_settle: an outside branch's Confirm or Cancel moves its stock, inside its caller's transaction, after the
-- barrier let it through (p_sold: Confirm). Its SKU rows are locked in byte order first (the guard
-- of their stock, as every stock writer takes them); a Confirm sells exactly what its Try reserved
-- where it reserved it, each allocation a sale movement of the ledger (tcc_record_movements)
-- referencing the transaction;
-- a Cancel releases it.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_branch_settle(p_transaction_id text, p_reference text, p_sold boolean) RETURNS void
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_skus text[];
  -- The sales to record (tcc_record_movements), in (SKU, location) byte order.
  v_sale_sku text[];
  v_sale_location text[];
  v_sale_delta int[];
  v_sale_on_hand_after int[];
BEGIN
  SELECT array_agg(DISTINCT r.sku COLLATE "C" ORDER BY r.sku COLLATE "C") INTO v_skus FROM reservations r WHERE r.transaction_id = p_transaction_id;
  IF v_skus IS NULL THEN RETURN; END IF;
  PERFORM 1 FROM skus s WHERE s.sku = ANY (v_skus) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE;
  WITH held AS (SELECT r.sku, r.location_id, r.quantity FROM reservations r WHERE r.transaction_id = p_transaction_id),
  settled AS (
    UPDATE stock st SET on_hand = st.on_hand - CASE WHEN p_sold THEN h.quantity ELSE 0 END, reserved = st.reserved - h.quantity, updated_at = now()
      FROM held h WHERE st.sku = ANY (v_skus) AND st.sku = h.sku AND st.location_id = h.location_id
    RETURNING st.sku, st.location_id, st.on_hand, h.quantity)
  SELECT array_agg(s.sku ORDER BY s.sku COLLATE "C", s.location_id COLLATE "C"), array_agg(s.location_id ORDER BY s.sku COLLATE "C", s.location_id COLLATE "C"),
         array_agg(-s.quantity ORDER BY s.sku COLLATE "C", s.location_id COLLATE "C"), array_agg(s.on_hand ORDER BY s.sku COLLATE "C", s.location_id COLLATE "C")
    INTO v_sale_sku, v_sale_location, v_sale_delta, v_sale_on_hand_after
    FROM settled s WHERE p_sold;
  IF v_sale_sku IS NOT NULL THEN
    PERFORM 1 FROM tcc_record_movements('sale', v_sale_sku, v_sale_location, v_sale_delta, v_sale_on_hand_after,
                                        array_fill(p_reference, ARRAY[cardinality(v_sale_sku)]), array_fill('system'::text, ARRAY[cardinality(v_sale_sku)]),
                                        NULL, NULL, NULL, NULL);
  END IF;
  IF NOT p_sold AND EXISTS (SELECT 1 FROM skus s WHERE s.sku = ANY (v_skus) AND s.low_stock) THEN
    PERFORM tcc_low_stock(v_skus);
  END IF;
END
$fn$;
