-- tcc_stock_adjust: adds p_delta to a location's on hand (POST /admin/inventory/{sku}/adjustments):
-- one 'adjustment' movement with its reason and reference. Concurrent adjustments and sales never
-- lose an update: each reads the row under the SKU row's lock. With an Idempotency-Key (p_key), the
-- same key and body (p_hash) answer the first movement and change nothing more; another body is
-- IDEMPOTENCY_KEY_REUSED. A location without a row for the SKU gets one.
-- 'created' and 'replayed' answer r_movement (the movement's JSON) and r_inventory (the SKU's
-- inventory JSON after it). A keyed adjustment keeps that inventory on its movement
-- (answer_inventory, json as written), so a replay answers the first result key for key; one made
-- before answers were kept answers the inventory as it is now.
-- Outcomes: 'created', 'replayed', 'IDEMPOTENCY_KEY_REUSED',
-- 'UNKNOWN_SKU', 'UNKNOWN_LOCATION', 'STOCK_BELOW_RESERVED' (on hand + delta below what is reserved
-- there, or below 0; r_reserved), 'ON_HAND_ABOVE_MAX' (above 1000000000, the most a location holds:
-- the stock table's CHECK, which would otherwise fail the statement).
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_stock_adjust(
  p_sku text, p_location text, p_delta int, p_reason text, p_reference text,
  p_actor text, p_operator text, p_key text, p_hash text)
RETURNS TABLE (r_outcome text, r_movement text, r_reserved int, r_inventory text)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_on_hand int;
  v_reserved int;
  v_existing stock_movements;
  v_movement stock_movements;
  v_inventory json;
BEGIN
  IF p_key IS NOT NULL THEN
    -- The key first, and the lookup in a later statement: it sees a first adjustment that committed
    -- while this one waited for the key.
    PERFORM pg_advisory_xact_lock(7703, hashtext(p_key));
    SELECT * INTO v_existing FROM stock_movements m WHERE m.idempotency_key = p_key;
    IF FOUND THEN
      IF v_existing.request_hash = p_hash THEN
        RETURN QUERY SELECT 'replayed', tcc_movement_json(v_existing)::text, NULL::int,
                            coalesce(v_existing.answer_inventory, tcc_inventory_json(p_sku))::text;
      ELSE
        RETURN QUERY SELECT 'IDEMPOTENCY_KEY_REUSED', NULL::text, NULL::int, NULL::text;
      END IF;
      RETURN;
    END IF;
  END IF;
  PERFORM 1 FROM skus s WHERE s.sku = p_sku FOR NO KEY UPDATE;
  IF NOT FOUND THEN RETURN QUERY SELECT 'UNKNOWN_SKU', NULL::text, NULL::int, NULL::text; RETURN; END IF;
  PERFORM 1 FROM locations l WHERE l.id = p_location;
  IF NOT FOUND THEN RETURN QUERY SELECT 'UNKNOWN_LOCATION', NULL::text, NULL::int, NULL::text; RETURN; END IF;
  SELECT st.on_hand, st.reserved INTO v_on_hand, v_reserved FROM stock st WHERE st.sku = p_sku AND st.location_id = p_location;
  IF coalesce(v_on_hand, 0) + p_delta < greatest(coalesce(v_reserved, 0), 0) THEN
    RETURN QUERY SELECT 'STOCK_BELOW_RESERVED', NULL::text, coalesce(v_reserved, 0), NULL::text; RETURN;
  END IF;
  IF coalesce(v_on_hand, 0) + p_delta > 1000000000 THEN
    RETURN QUERY SELECT 'ON_HAND_ABOVE_MAX', NULL::text, NULL::int, NULL::text; RETURN;
  END IF;
  -- An UPDATE when the row exists: INSERT … ON CONFLICT checks its proposed row (on hand = delta)
  -- against the table's CHECKs first, so a negative delta would fail there.
  IF v_on_hand IS NULL THEN
    INSERT INTO stock (sku, location_id, on_hand) VALUES (p_sku, p_location, p_delta);
  ELSE
    UPDATE stock SET on_hand = on_hand + p_delta, updated_at = now() WHERE sku = p_sku AND location_id = p_location;
  END IF;
  SELECT * INTO v_movement
    FROM tcc_record_movements('adjustment', ARRAY[p_sku], ARRAY[p_location], ARRAY[p_delta], ARRAY[coalesce(v_on_hand, 0) + p_delta],
                              ARRAY[p_reference], ARRAY[p_actor], ARRAY[p_operator], p_reason, p_key, p_hash);
  PERFORM tcc_low_stock(ARRAY[p_sku]);
  v_inventory := tcc_inventory_json(p_sku);
  IF p_key IS NOT NULL THEN
    UPDATE stock_movements SET answer_inventory = v_inventory WHERE id = v_movement.id;
  END IF;
  RETURN QUERY SELECT 'created', tcc_movement_json(v_movement)::text, coalesce(v_reserved, 0), v_inventory::text;
END
$fn$;
