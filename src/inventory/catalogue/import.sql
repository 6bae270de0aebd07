-- tcc_inventory_import: a catalogue import (POST /admin/inventory/import), all or nothing, in a few statements whatever
-- its size. Row i (0-based, in the caller's order) names a SKU and a location (default 'default')
-- and any of: name, price, currency, low-stock threshold (the SKU's; the caller has merged each
-- SKU's values across its rows, so every row of a SKU carries the same), on hand and safety stock
-- (the location's). The caller validated types and ranges; here what needs the database:
--   an unknown location            → 'VALIDATION_FAILED', r_row, r_field 'locationId'
--   a new SKU without price/currency → 'VALIDATION_FAILED', r_row, r_field 'priceMinor' / 'currency'
--   on hand below what is reserved  → 'STOCK_BELOW_RESERVED', r_row, r_sku, r_location
-- (the first failing row by index), else 'ok' with how many SKUs were created, updated (any value
-- changed, the name included) and left unchanged (every given value equal), and the sum of the
-- movements written. A failure may leave rows written (a new SKU is created before it is judged):
-- the caller rolls the transaction back on any outcome but 'ok'.
--
-- Locks are taken late and only where something changes, so Trys (which give up on a SKU row held
-- longer than their lock_timeout) meet them as briefly as the writes allow:
--  1. Without a lock, on the last committed state: the SKUs the import would change (new ones,
--     values or stock rows that differ). The others are left as they are — unlocked, unwritten,
--     counted unchanged: the import is as if it came before any change made to them since.
--  2. Those SKUs, existing and new together, in one pass in byte order: INSERT … ON CONFLICT
--     creates a new one, and locks an existing one (the guard of its values and stock) or one that
--     another transaction is creating (another import, PUT /admin/inventory/{sku}) once that
--     commits — so two imports creating one SKU at once both succeed and one creates it. A new SKU
--     without a price or currency is inserted with stand-ins and refused in the next statement. One
--     pass, one order: two imports cannot deadlock. (Locking the existing ones first and creating
--     the new ones after did: an import that saw SKU B as existing locked it and then waited for A,
--     which one that saw both as new had created and then waited for B — a SKU made between their
--     snapshots by a third writer.)
--  3. What the locks guard is read in later statements, judged again and written where it still
--     differs: the SKUs' values, the stock rows (every on hand it changes an 'import' movement, by tcc_record_movements),
--     low stock for the SKUs created or changed.
-- Large lists are joined (hashed), never searched with = ANY per row.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_inventory_import(
  p_skus text[], p_names text[], p_prices bigint[], p_currencies text[], p_thresholds int[],
  p_locations text[], p_on_hands int[], p_safety_stocks int[], p_actor text, p_operator text)
RETURNS TABLE (r_outcome text, r_row int, r_field text, r_sku text, r_location text,
               r_created int, r_updated int, r_unchanged int, r_on_hand_delta bigint)
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_row int;
  v_field text;
  v_existing text[];
  v_new text[];
  v_created text[];
  v_raced text[];
  v_sku_changed text[];
  v_stock_changed text[];
  v_delta bigint;
  -- The 'import' movements to record (tcc_record_movements), in (SKU, location) byte order.
  v_move_sku text[];
  v_move_location text[];
  v_move_delta int[];
  v_move_on_hand int[];
  v_skus int;
  v_changed int;
BEGIN
  SELECT u.ord - 1 INTO v_row FROM unnest(p_locations) WITH ORDINALITY AS u(id, ord)
   WHERE NOT EXISTS (SELECT 1 FROM locations l WHERE l.id = u.id) ORDER BY u.ord LIMIT 1;
  IF FOUND THEN
    RETURN QUERY SELECT 'VALIDATION_FAILED', v_row, 'locationId', NULL, NULL, NULL::int, NULL::int, NULL::int, NULL::bigint; RETURN;
  END IF;

  -- 1. What would change, on the last committed state (no lock yet).
  WITH given AS (
    SELECT DISTINCT ON (u.sku) u.sku, u.name, u.price, u.currency, u.threshold
      FROM unnest(p_skus, p_names, p_prices, p_currencies, p_thresholds) AS u(sku, name, price, currency, threshold)
     ORDER BY u.sku),
  stock_differs AS (
    SELECT DISTINCT u.sku
      FROM unnest(p_skus, p_locations, p_on_hands, p_safety_stocks) AS u(sku, location_id, on_hand, safety)
      LEFT JOIN stock st ON st.sku = u.sku AND st.location_id = u.location_id
     WHERE (u.on_hand IS NOT NULL OR u.safety IS NOT NULL)
       AND (st.sku IS NULL OR coalesce(u.on_hand, st.on_hand) <> st.on_hand OR coalesce(u.safety, st.safety_stock) <> st.safety_stock))
  SELECT array_agg(g.sku ORDER BY g.sku COLLATE "C") FILTER (WHERE s.sku IS NOT NULL),
         array_agg(g.sku ORDER BY g.sku COLLATE "C") FILTER (WHERE s.sku IS NULL)
    INTO v_existing, v_new
    FROM given g LEFT JOIN skus s ON s.sku = g.sku
   WHERE s.sku IS NULL
      OR g.sku IN (SELECT d.sku FROM stock_differs d)
      OR (coalesce(g.name, s.name), coalesce(g.price, s.price_minor), coalesce(g.currency, s.currency::text), coalesce(g.threshold, s.low_stock_threshold))
         IS DISTINCT FROM (s.name, s.price_minor, s.currency::text, s.low_stock_threshold);

  -- 2. Those SKUs, existing and new, in one pass in byte order: created, or locked (ON CONFLICT).
  WITH per_sku AS (
    SELECT DISTINCT ON (u.sku) u.sku, u.name, u.price, u.currency, u.threshold
      FROM unnest(p_skus, p_names, p_prices, p_currencies, p_thresholds) AS u(sku, name, price, currency, threshold)
      JOIN unnest(coalesce(v_existing, '{}') || coalesce(v_new, '{}')) AS n(sku) ON n.sku = u.sku
     ORDER BY u.sku),
  touched AS (
    INSERT INTO skus AS s (sku, name, price_minor, currency, low_stock_threshold)
    SELECT p.sku, coalesce(p.name, ''), coalesce(p.price, 0), coalesce(p.currency, 'XXX'), coalesce(p.threshold, 0)
      FROM per_sku p ORDER BY p.sku COLLATE "C"
    ON CONFLICT (sku) DO UPDATE SET name = s.name WHERE false
    RETURNING s.sku)
  SELECT coalesce(array_agg(t.sku), '{}') INTO v_created FROM touched t;
  -- A new SKU another transaction made meanwhile is locked now (ON CONFLICT): it is one of the existing.
  SELECT array_agg(n.sku) INTO v_raced FROM unnest(coalesce(v_new, '{}')) AS n(sku) WHERE NOT EXISTS (SELECT 1 FROM unnest(v_created) AS c(sku) WHERE c.sku = n.sku);
  v_existing := coalesce(v_existing, '{}') || coalesce(v_raced, '{}');

  -- 3. Judged again on what the locks guard (later statements than the locks).
  SELECT u.ord - 1, CASE WHEN u.price IS NULL THEN 'priceMinor' ELSE 'currency' END INTO v_row, v_field
    FROM unnest(p_skus, p_prices, p_currencies) WITH ORDINALITY AS u(sku, price, currency, ord)
    JOIN unnest(v_created) AS c(sku) ON c.sku = u.sku
   WHERE u.price IS NULL OR u.currency IS NULL
   ORDER BY u.ord LIMIT 1;
  IF FOUND THEN
    RETURN QUERY SELECT 'VALIDATION_FAILED', v_row, v_field, NULL, NULL, NULL::int, NULL::int, NULL::int, NULL::bigint; RETURN;
  END IF;

  SELECT u.ord - 1, u.sku, u.location_id INTO v_row, r_sku, r_location
    FROM unnest(p_skus, p_locations, p_on_hands) WITH ORDINALITY AS u(sku, location_id, on_hand, ord)
    JOIN unnest(v_existing) AS e(sku) ON e.sku = u.sku
    JOIN stock st ON st.sku = u.sku AND st.location_id = u.location_id
   WHERE u.on_hand < st.reserved ORDER BY u.ord LIMIT 1;
  IF FOUND THEN
    RETURN QUERY SELECT 'STOCK_BELOW_RESERVED', v_row, 'onHand', r_sku, r_location, NULL::int, NULL::int, NULL::int, NULL::bigint; RETURN;
  END IF;

  -- The locked SKUs' values that still differ from those given (a value not given keeps today's).
  WITH per_sku AS (
    SELECT DISTINCT ON (u.sku) u.sku, u.name, u.price, u.currency, u.threshold
      FROM unnest(p_skus, p_names, p_prices, p_currencies, p_thresholds) AS u(sku, name, price, currency, threshold)
      JOIN unnest(v_existing) AS e(sku) ON e.sku = u.sku
     WHERE (u.name, u.price, u.currency, u.threshold) IS DISTINCT FROM (NULL::text, NULL::bigint, NULL::text, NULL::int)
     ORDER BY u.sku),
  changed AS (
    UPDATE skus s SET name = coalesce(p.name, s.name), price_minor = coalesce(p.price, s.price_minor), currency = coalesce(p.currency, s.currency),
                      low_stock_threshold = coalesce(p.threshold, s.low_stock_threshold), updated_at = now()
      FROM per_sku p
     WHERE s.sku = p.sku
       AND (coalesce(p.name, s.name), coalesce(p.price, s.price_minor), coalesce(p.currency, s.currency::text), coalesce(p.threshold, s.low_stock_threshold))
           IS DISTINCT FROM (s.name, s.price_minor, s.currency::text, s.low_stock_threshold)
    RETURNING s.sku)
  SELECT coalesce(array_agg(c.sku), '{}') INTO v_sku_changed FROM changed c;

  -- Stock rows of the locked and created SKUs: every new SKU gets its default row; each row of the
  -- import sets what it names. Only a row that is new or whose on hand or safety stock differs is written.
  WITH mine AS (SELECT e.sku FROM unnest(v_existing || v_created) AS e(sku)),
  rows_given AS (
    SELECT u.sku, u.location_id, u.on_hand, u.safety
      FROM unnest(p_skus, p_locations, p_on_hands, p_safety_stocks) AS u(sku, location_id, on_hand, safety)
      JOIN mine m ON m.sku = u.sku),
  wanted AS (
    SELECT r.sku, r.location_id, r.on_hand, r.safety FROM rows_given r WHERE r.on_hand IS NOT NULL OR r.safety IS NOT NULL
    UNION ALL
    SELECT c.sku, 'default', NULL::int, NULL::int FROM unnest(v_created) c(sku)
     WHERE NOT EXISTS (SELECT 1 FROM rows_given r WHERE r.sku = c.sku AND r.location_id = 'default' AND (r.on_hand IS NOT NULL OR r.safety IS NOT NULL))),
  diff AS MATERIALIZED (
    SELECT w.sku, w.location_id, st.on_hand AS old_on_hand, coalesce(w.on_hand, st.on_hand, 0) AS on_hand,
           coalesce(w.safety, st.safety_stock, 0) AS safety
      FROM wanted w LEFT JOIN stock st ON st.sku = w.sku AND st.location_id = w.location_id
     WHERE st.sku IS NULL OR coalesce(w.on_hand, st.on_hand) <> st.on_hand OR coalesce(w.safety, st.safety_stock) <> st.safety_stock),
  written AS (
    INSERT INTO stock (sku, location_id, on_hand, safety_stock)
    SELECT d.sku, d.location_id, d.on_hand, d.safety FROM diff d
    ON CONFLICT (sku, location_id) DO UPDATE SET on_hand = EXCLUDED.on_hand, safety_stock = EXCLUDED.safety_stock, updated_at = now()),
  moves AS (
    SELECT d.sku, d.location_id, d.on_hand - coalesce(d.old_on_hand, 0) AS delta, d.on_hand
      FROM diff d WHERE d.on_hand <> coalesce(d.old_on_hand, 0))
  SELECT (SELECT coalesce(array_agg(DISTINCT d.sku), '{}') FROM diff d),
         (SELECT array_agg(m.sku ORDER BY m.sku COLLATE "C", m.location_id COLLATE "C") FROM moves m),
         (SELECT array_agg(m.location_id ORDER BY m.sku COLLATE "C", m.location_id COLLATE "C") FROM moves m),
         (SELECT array_agg(m.delta ORDER BY m.sku COLLATE "C", m.location_id COLLATE "C") FROM moves m),
         (SELECT array_agg(m.on_hand ORDER BY m.sku COLLATE "C", m.location_id COLLATE "C") FROM moves m)
    INTO v_stock_changed, v_move_sku, v_move_location, v_move_delta, v_move_on_hand;
  v_delta := 0;
  IF v_move_sku IS NOT NULL THEN
    SELECT sum(m.delta) INTO v_delta
      FROM tcc_record_movements('import', v_move_sku, v_move_location, v_move_delta, v_move_on_hand, NULL,
                                array_fill(p_actor, ARRAY[cardinality(v_move_sku)]), array_fill(p_operator, ARRAY[cardinality(v_move_sku)]), NULL, NULL, NULL) m;
  END IF;

  SELECT count(DISTINCT u.sku)::int INTO v_skus FROM unnest(p_skus) u(sku);
  SELECT count(*)::int INTO v_changed FROM (SELECT unnest(v_sku_changed) UNION SELECT unnest(v_stock_changed) EXCEPT SELECT unnest(v_created)) x;
  PERFORM tcc_low_stock(v_created || v_sku_changed || v_stock_changed);
  RETURN QUERY SELECT 'ok', NULL::int, NULL, NULL, NULL, cardinality(v_created), v_changed, v_skus - cardinality(v_created) - v_changed, v_delta;
END
$fn$;
