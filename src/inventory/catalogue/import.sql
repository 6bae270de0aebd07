-- tcc_inventory_import: a catalogue import (POST /admin/inventory/import), all or nothing, in a few statements whatever
-- its size. Row i (0-based, in the caller's order) names a SKU and a location (default 'default')
-- and any of: name, price, currency, low-stock threshold (the SKU's; the caller has merged each
-- SKU's values across its rows, so every row of a SKU carries the same), on hand and safety stock
-- (the location's). The caller validated types and ranges; here what needs the database:
--   an unknown location            → 'VALIDATION_FAILED', r_row, r_field 'locationId'
--   a new SKU without price/currency → 'VALIDATION_FAILED', r_row, r_field 'priceMinor' / 'currency'
--   on hand below what is reserved  → 'STOCK_BELOW_RESERVED', r_row, r_sku, r_location
-- (the first failing row by index), else 'ok' with how many SKUs were created and updated. The
-- existing SKUs' rows are locked in byte order before their stock is read; every on hand it changes
-- is an 'import' movement; low stock is judged for every SKU it touches.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_inventory_import(
  p_skus text[], p_names text[], p_prices bigint[], p_currencies text[], p_thresholds int[],
  p_locations text[], p_on_hands int[], p_safety_stocks int[], p_actor text, p_operator text)
RETURNS TABLE (r_outcome text, r_row int, r_field text, r_sku text, r_location text, r_created int, r_updated int)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_row int;
  v_field text;
  v_created int;
  v_updated int;
BEGIN
  SELECT u.ord - 1 INTO v_row FROM unnest(p_locations) WITH ORDINALITY AS u(id, ord)
   WHERE NOT EXISTS (SELECT 1 FROM locations l WHERE l.id = u.id) ORDER BY u.ord LIMIT 1;
  IF FOUND THEN RETURN QUERY SELECT 'VALIDATION_FAILED', v_row, 'locationId', NULL, NULL, NULL::int, NULL::int; RETURN; END IF;

  -- The SKUs that exist, locked in byte order (the guard of their stock).
  PERFORM 1 FROM skus s WHERE s.sku = ANY (p_skus) ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE;

  SELECT u.ord - 1, CASE WHEN u.price IS NULL THEN 'priceMinor' ELSE 'currency' END INTO v_row, v_field
    FROM unnest(p_skus, p_prices, p_currencies) WITH ORDINALITY AS u(sku, price, currency, ord)
   WHERE (u.price IS NULL OR u.currency IS NULL) AND NOT EXISTS (SELECT 1 FROM skus s WHERE s.sku = u.sku)
   ORDER BY u.ord LIMIT 1;
  IF FOUND THEN RETURN QUERY SELECT 'VALIDATION_FAILED', v_row, v_field, NULL, NULL, NULL::int, NULL::int; RETURN; END IF;

  -- The stock as the locks left it (a later statement than the locks).
  SELECT u.ord - 1, u.sku, u.location_id INTO v_row, r_sku, r_location
    FROM unnest(p_skus, p_locations, p_on_hands) WITH ORDINALITY AS u(sku, location_id, on_hand, ord)
    JOIN stock st ON st.sku = u.sku AND st.location_id = u.location_id
   WHERE u.on_hand < st.reserved ORDER BY u.ord LIMIT 1;
  IF FOUND THEN RETURN QUERY SELECT 'STOCK_BELOW_RESERVED', v_row, 'onHand', r_sku, r_location, NULL::int, NULL::int; RETURN; END IF;

  WITH per_sku AS MATERIALIZED (
    SELECT DISTINCT ON (u.sku) u.sku, u.name, u.price, u.currency, u.threshold, s.sku IS NOT NULL AS existing
      FROM unnest(p_skus, p_names, p_prices, p_currencies, p_thresholds) WITH ORDINALITY AS u(sku, name, price, currency, threshold, ord)
      LEFT JOIN skus s ON s.sku = u.sku
     ORDER BY u.sku, u.ord),
  created AS (
    INSERT INTO skus (sku, name, price_minor, currency, low_stock_threshold)
    SELECT p.sku, coalesce(p.name, ''), p.price, p.currency, coalesce(p.threshold, 0) FROM per_sku p WHERE NOT p.existing
    RETURNING sku),
  updated AS (
    UPDATE skus s SET name = coalesce(p.name, s.name), price_minor = coalesce(p.price, s.price_minor), currency = coalesce(p.currency, s.currency),
                      low_stock_threshold = coalesce(p.threshold, s.low_stock_threshold), updated_at = now()
      FROM per_sku p WHERE s.sku = p.sku AND p.existing
       AND (p.name, p.price, p.currency, p.threshold) IS DISTINCT FROM (NULL::text, NULL::bigint, NULL::text, NULL::int)
    RETURNING s.sku)
  SELECT (SELECT count(*) FROM created)::int, (SELECT count(*) FROM per_sku p WHERE p.existing)::int INTO v_created, v_updated;

  -- Stock rows: every new SKU gets its default row; each row of the import sets what it names.
  WITH rows_given AS (
    SELECT u.sku, u.location_id, u.on_hand, u.safety, u.ord
      FROM unnest(p_skus, p_locations, p_on_hands, p_safety_stocks) WITH ORDINALITY AS u(sku, location_id, on_hand, safety, ord)),
  wanted AS (
    SELECT r.sku, r.location_id, r.on_hand, r.safety FROM rows_given r WHERE r.on_hand IS NOT NULL OR r.safety IS NOT NULL
    UNION ALL
    SELECT DISTINCT r.sku, 'default', NULL::int, NULL::int FROM rows_given r
     WHERE NOT EXISTS (SELECT 1 FROM stock st WHERE st.sku = r.sku AND st.location_id = 'default') AND NOT EXISTS (SELECT 1 FROM rows_given r2 WHERE r2.sku = r.sku AND r2.location_id = 'default' AND (r2.on_hand IS NOT NULL OR r2.safety IS NOT NULL))),
  before AS (
    SELECT w.sku, w.location_id, st.on_hand AS old_on_hand, coalesce(w.on_hand, st.on_hand, 0) AS on_hand,
           coalesce(w.safety, st.safety_stock, 0) AS safety
      FROM wanted w LEFT JOIN stock st ON st.sku = w.sku AND st.location_id = w.location_id),
  written AS (
    INSERT INTO stock (sku, location_id, on_hand, safety_stock)
    SELECT b.sku, b.location_id, b.on_hand, b.safety FROM before b
    ON CONFLICT (sku, location_id) DO UPDATE SET on_hand = EXCLUDED.on_hand, safety_stock = EXCLUDED.safety_stock, updated_at = now())
  INSERT INTO stock_movements (sku, location_id, kind, delta, on_hand_after, actor, operator)
  SELECT b.sku, b.location_id, 'import', b.on_hand - coalesce(b.old_on_hand, 0), b.on_hand, p_actor, p_operator
    FROM before b WHERE b.on_hand <> coalesce(b.old_on_hand, 0)
   ORDER BY b.sku COLLATE "C", b.location_id COLLATE "C";

  PERFORM tcc_low_stock(ARRAY(SELECT DISTINCT u.sku FROM unnest(p_skus) u(sku)));
  RETURN QUERY SELECT 'ok', NULL::int, NULL, NULL, NULL, v_created, v_updated;
END
$fn$;
