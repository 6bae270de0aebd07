import type { TestDatabase } from './database.js';

const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];

/**
 * The stock invariants of API.md ("Order states"), per SKU and location, computed here from the
 * rows themselves (not through the service's own consistency check): `reserved` is what holding
 * orders and reserved outside branches hold there; `reserved <= onHand`; `onHand` is the sum of
 * the location's ledger movements. Returns every row that breaks one (empty when all hold).
 */
export async function stockDrift(db: TestDatabase, skus?: string[]): Promise<unknown[]> {
  return db.query(
    `WITH held AS (
       SELECT line->>'sku' AS sku, a->>'locationId' AS location_id, sum((a->>'quantity')::int)::int AS q
         FROM orders o, jsonb_array_elements(o.items) AS line, jsonb_array_elements(line->'allocations') AS a
        WHERE o.status = ANY ($1::text[]) GROUP BY 1, 2
       UNION ALL
       SELECT r.sku, r.location_id, sum(r.quantity)::int FROM reservations r
         JOIN participant_branches b ON b.transaction_id = r.transaction_id
        WHERE b.status = 'RESERVED' GROUP BY 1, 2),
     ledger AS (SELECT sku, location_id, sum(delta)::int AS on_hand FROM stock_movements GROUP BY 1, 2)
     SELECT st.sku, st.location_id, st.on_hand, st.reserved,
            coalesce((SELECT sum(h.q) FROM held h WHERE h.sku = st.sku AND h.location_id = st.location_id), 0)::int AS held,
            coalesce(l.on_hand, 0) AS ledger
       FROM stock st LEFT JOIN ledger l ON l.sku = st.sku AND l.location_id = st.location_id
      WHERE ($2::text[] IS NULL OR st.sku = ANY ($2::text[]))
        AND (st.reserved < 0 OR st.reserved > st.on_hand
             OR st.reserved <> coalesce((SELECT sum(h.q) FROM held h WHERE h.sku = st.sku AND h.location_id = st.location_id), 0)
             OR st.on_hand <> coalesce(l.on_hand, 0))
      ORDER BY 1, 2`,
    [HOLDING, skus ?? null],
  );
}

/** What each SKU holds at each location, and what confirmed orders and branches sold from there. */
export async function stockByLocation(db: TestDatabase, skus: string[]): Promise<{ sku: string; location_id: string; on_hand: number; reserved: number; sold: number }[]> {
  return db.query(
    `SELECT st.sku, st.location_id, st.on_hand, st.reserved,
            (coalesce((SELECT sum((a->>'quantity')::int) FROM orders o, jsonb_array_elements(o.items) AS line, jsonb_array_elements(line->'allocations') AS a
                        WHERE o.status = 'CONFIRM_SUCCESS' AND line->>'sku' = st.sku AND a->>'locationId' = st.location_id), 0)
             + coalesce((SELECT sum(r.quantity) FROM reservations r JOIN participant_branches b ON b.transaction_id = r.transaction_id
                          WHERE b.status = 'CONFIRMED' AND r.sku = st.sku AND r.location_id = st.location_id), 0))::int AS sold
       FROM stock st WHERE st.sku = ANY ($1::text[]) ORDER BY st.sku, st.location_id`,
    [skus],
  );
}
