import { statement } from '../../database/db.js';

/** The catalogue's statements: a page of SKUs by sku (byte order), and an import (import.sql). */
export const CATALOGUE_SQL = {
  /**
   * $1 after this sku, $2 prefix, $3 a stock row at this location, $4 low stock only: a threshold
   * above 0 and available (over active locations, as the inventory JSON sums it) at or below it;
   * $5 the page size; $6 low at this location only; $7 the location `default`; $8 low stock
   * anywhere: low in all ($4) or at some location.
   * `low_at`: the active locations carrying the SKU whose own available is at or below its
   * threshold — `default` only when it holds stock or is the SKU's only row (every SKU has a row
   * there, and one kept elsewhere says nothing by its empty `default`).
   */
  page: statement(
    'catalogue_page',
    `SELECT s.sku, tcc_inventory_json(s.sku)::text AS body, la.low_at FROM skus s
      CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(st.location_id ORDER BY l.priority, st.location_id COLLATE "C")
                          FILTER (WHERE l.active AND greatest(st.on_hand - st.reserved - st.safety_stock, 0) <= s.low_stock_threshold
                                    AND NOT (st.location_id = $7 AND st.on_hand = 0 AND st.reserved = 0
                                             AND EXISTS (SELECT 1 FROM stock o WHERE o.sku = s.sku AND o.location_id <> $7))), '{}') AS low_at,
               coalesce(sum(greatest(st.on_hand - st.reserved - st.safety_stock, 0)) FILTER (WHERE l.active), 0) AS available
          FROM stock st JOIN locations l ON l.id = st.location_id
         WHERE st.sku = s.sku AND s.low_stock_threshold > 0) la
      WHERE ($1::text IS NULL OR s.sku COLLATE "C" > $1::text COLLATE "C")
        AND ($2::text IS NULL OR starts_with(s.sku, $2::text))
        AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM stock st WHERE st.sku = s.sku AND st.location_id = $3::text))
        AND (NOT $4::boolean OR (s.low_stock_threshold > 0 AND la.available <= s.low_stock_threshold))
        AND ($6::text IS NULL OR $6::text = ANY (la.low_at))
        AND (NOT $8::boolean OR (s.low_stock_threshold > 0 AND (la.available <= s.low_stock_threshold OR cardinality(la.low_at) > 0)))
      ORDER BY s.sku COLLATE "C" LIMIT $5`,
  ),

  import: statement(
    'catalogue_import',
    `SELECT r_outcome, r_row, r_field, r_sku, r_location, r_created, r_updated, r_unchanged, r_on_hand_delta::float8 AS r_on_hand_delta
       FROM tcc_inventory_import($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::int[], $8::int[], $9, $10)`,
  ),
} as const;

export interface ImportOutcomeRow {
  r_outcome: 'ok' | 'VALIDATION_FAILED' | 'STOCK_BELOW_RESERVED';
  r_row: number | null;
  r_field: string | null;
  r_sku: string | null;
  r_location: string | null;
  r_created: number | null;
  r_updated: number | null;
  r_unchanged: number | null;
  r_on_hand_delta: number | null;
}
