-- tcc_stock_set: sets the on-hand stock of a SKU at a location (PUT /admin/inventory/{sku}/locations/
-- {locationId}, and the default location's stock for PUT /admin/inventory/{sku}); a 'set' movement
-- of new - old (none when equal), recorded by tcc_record_movements. With p_expected the set happens only while on hand still equals
-- it (compare-and-set: STOCK_CHANGED with what it is), so a sync never overwrites sales it did not
-- see. A missing p_safety_stock keeps today's (0 for a new row). On hand below what is reserved
-- there is STOCK_BELOW_RESERVED. The SKU row is locked first (it guards its stock rows) and the
-- stock read by a later statement, so it is the stock as the last writer left it.
-- Outcomes: 'ok', 'UNKNOWN_SKU', 'UNKNOWN_LOCATION', 'STOCK_CHANGED', 'STOCK_BELOW_RESERVED'
-- (r_current, r_reserved: the location's on hand and reserved).
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_stock_set(
  p_sku text, p_location text, p_on_hand int, p_safety_stock int, p_expected int,
  p_actor text, p_operator text)
RETURNS TABLE (r_outcome text, r_current int, r_reserved int)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_on_hand int;
  v_reserved int;
  v_safety int;
BEGIN
  PERFORM 1 FROM skus s WHERE s.sku = p_sku FOR NO KEY UPDATE;
  IF NOT FOUND THEN RETURN QUERY SELECT 'UNKNOWN_SKU', NULL::int, NULL::int; RETURN; END IF;
  PERFORM 1 FROM locations l WHERE l.id = p_location;
  IF NOT FOUND THEN RETURN QUERY SELECT 'UNKNOWN_LOCATION', NULL::int, NULL::int; RETURN; END IF;
  SELECT st.on_hand, st.reserved, st.safety_stock INTO v_on_hand, v_reserved, v_safety
    FROM stock st WHERE st.sku = p_sku AND st.location_id = p_location;
  IF p_expected IS NOT NULL AND p_expected <> coalesce(v_on_hand, 0) THEN
    RETURN QUERY SELECT 'STOCK_CHANGED', coalesce(v_on_hand, 0), coalesce(v_reserved, 0); RETURN;
  END IF;
  IF p_on_hand < coalesce(v_reserved, 0) THEN
    RETURN QUERY SELECT 'STOCK_BELOW_RESERVED', coalesce(v_on_hand, 0), coalesce(v_reserved, 0); RETURN;
  END IF;
  INSERT INTO stock (sku, location_id, on_hand, safety_stock) VALUES (p_sku, p_location, p_on_hand, coalesce(p_safety_stock, 0))
  ON CONFLICT (sku, location_id) DO UPDATE
    SET on_hand = EXCLUDED.on_hand, safety_stock = coalesce(p_safety_stock, stock.safety_stock), updated_at = now();
  IF p_on_hand <> coalesce(v_on_hand, 0) THEN
    PERFORM 1 FROM tcc_record_movements('set', ARRAY[p_sku], ARRAY[p_location], ARRAY[p_on_hand - coalesce(v_on_hand, 0)], ARRAY[p_on_hand],
                                        NULL, ARRAY[p_actor], ARRAY[p_operator], NULL, NULL, NULL);
  END IF;
  PERFORM tcc_low_stock(ARRAY[p_sku]);
  RETURN QUERY SELECT 'ok', p_on_hand, coalesce(v_reserved, 0);
END
$fn$;
