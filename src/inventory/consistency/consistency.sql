-- tcc_inventory_consistency: the inventory consistency check (API.md, "Consistency"), in one statement, so on one snapshot:
-- per stock row, `held` — the allocations there of holding orders and reserved outside branches —
-- against `reserved`, and `ledger` — the sum of its movements' deltas — against `on_hand`. A Try
-- or move writes its orders and its stock in one transaction, so a snapshot never shows one without
-- the other: no false mismatch while orders run. Returns every row checked, mismatches flagged.
--
-- Applied after the migrations, and again whenever this file changes (src/database/sql-functions.ts).
CREATE OR REPLACE FUNCTION tcc_inventory_consistency(p_holding text[])
RETURNS TABLE (r_sku text, r_location text, r_reserved int, r_held int, r_on_hand int, r_ledger int, r_mismatch boolean)
LANGUAGE sql STABLE
AS $fn$
  WITH held AS (
    SELECT h.sku, h.location_id, sum(h.quantity)::int AS quantity FROM (
      SELECT line->>'sku' AS sku, alloc->>'locationId' AS location_id, (alloc->>'quantity')::int AS quantity
        FROM orders o
        CROSS JOIN LATERAL jsonb_array_elements(o.items) AS line
        CROSS JOIN LATERAL jsonb_array_elements(line->'allocations') AS alloc
       WHERE o.status = ANY (p_holding)
      UNION ALL
      SELECT r.sku, r.location_id, r.quantity
        FROM participant_branches b JOIN reservations r ON r.transaction_id = b.transaction_id
       WHERE b.status = 'RESERVED') h
     GROUP BY h.sku, h.location_id),
  ledger AS (
    SELECT m.sku, m.location_id, sum(m.delta)::int AS on_hand FROM stock_movements m GROUP BY m.sku, m.location_id)
  SELECT st.sku, st.location_id, st.reserved, coalesce(h.quantity, 0), st.on_hand, coalesce(l.on_hand, 0),
         st.reserved <> coalesce(h.quantity, 0) OR st.on_hand <> coalesce(l.on_hand, 0)
    FROM stock st
    LEFT JOIN held h ON h.sku = st.sku AND h.location_id = st.location_id
    LEFT JOIN ledger l ON l.sku = st.sku AND l.location_id = st.location_id
$fn$;
