import { statement } from '../../database/db.js';

/** The catalogue's statements: a page of SKUs by sku (byte order), and an import (import.sql). */
export const CATALOGUE_SQL = {
  /**
   * $1 after this sku, $2 prefix, $3 a stock row at this location, $4 low stock only: a threshold
   * above 0 and available (over active locations, as the inventory JSON sums it) at or below it.
   */
  page: statement(
    'catalogue_page',
    `SELECT s.sku, tcc_inventory_json(s.sku)::text AS body FROM skus s
      WHERE ($1::text IS NULL OR s.sku COLLATE "C" > $1::text COLLATE "C")
        AND ($2::text IS NULL OR starts_with(s.sku, $2::text))
        AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM stock st WHERE st.sku = s.sku AND st.location_id = $3::text))
        AND (NOT $4::boolean OR (s.low_stock_threshold > 0 AND s.low_stock_threshold >= (
              SELECT coalesce(sum(greatest(st.on_hand - st.reserved - st.safety_stock, 0)) FILTER (WHERE l.active), 0)
                FROM stock st JOIN locations l ON l.id = st.location_id WHERE st.sku = s.sku)))
      ORDER BY s.sku COLLATE "C" LIMIT $5`,
  ),

  import: statement(
    'catalogue_import',
    `SELECT r_outcome, r_row, r_field, r_sku, r_location, r_created, r_updated
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
}
