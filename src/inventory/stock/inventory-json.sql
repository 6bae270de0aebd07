-- tcc_inventory_json: the contract's inventory JSON (API.md, "Stock locations"), built where the
-- rows are: one definition for every answer about a SKU and for the inventory.low_stock event. A location's
-- available is max(0, onHand - reserved - safetyStock), 0 when inactive; the SKU's figures are
-- the sums over its locations, which are listed like the locations (priority, then id).
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_inventory_json(p_sku text) RETURNS json
LANGUAGE sql STABLE
AS $fn$
  SELECT json_build_object(
    'sku', s.sku, 'name', s.name, 'priceMinor', s.price_minor, 'currency', s.currency,
    'onHand', coalesce(sum(st.on_hand), 0), 'reserved', coalesce(sum(st.reserved), 0),
    'safetyStock', coalesce(sum(st.safety_stock), 0),
    'available', coalesce(sum(CASE WHEN l.active THEN greatest(st.on_hand - st.reserved - st.safety_stock, 0) ELSE 0 END), 0),
    'lowStockThreshold', s.low_stock_threshold,
    'locations', coalesce(json_agg(json_build_object(
        'locationId', st.location_id, 'onHand', st.on_hand, 'reserved', st.reserved, 'safetyStock', st.safety_stock,
        'available', CASE WHEN l.active THEN greatest(st.on_hand - st.reserved - st.safety_stock, 0) ELSE 0 END,
        'active', l.active)
      ORDER BY l.priority, st.location_id COLLATE "C") FILTER (WHERE st.sku IS NOT NULL), '[]'))
    FROM skus s
    LEFT JOIN stock st ON st.sku = s.sku
    LEFT JOIN locations l ON l.id = st.location_id
   WHERE s.sku = p_sku
   GROUP BY s.sku
$fn$;
