import { statement } from '../../database/db.js';

/** The ledger's statements: a SKU's movements newest first (keyset on id), and an adjustment (adjust-stock.sql). */
export const LEDGER_SQL = {
  skuExists: statement('ledger_sku_exists', `SELECT 1 AS found FROM skus WHERE sku = $1`),

  /** Newest first: ids grow in the order movements are written (under their SKU row's lock). */
  movements: statement(
    'ledger_movements',
    `SELECT m.id::text AS id, tcc_movement_json(m)::text AS body FROM stock_movements m
      WHERE m.sku = $1 AND ($2::text IS NULL OR m.location_id = $2) AND ($3::text IS NULL OR m.kind = $3)
        AND ($4::bigint IS NULL OR m.id < $4)
      ORDER BY m.id DESC LIMIT $5`,
  ),

  adjust: statement(
    'ledger_adjust',
    `SELECT r_outcome, r_movement, r_reserved, r_inventory FROM tcc_stock_adjust($1, $2, $3::int, $4, $5, $6, $7, $8, $9)`,
  ),
} as const;

export interface AdjustRow {
  r_outcome: 'created' | 'replayed' | 'IDEMPOTENCY_KEY_REUSED' | 'UNKNOWN_SKU' | 'UNKNOWN_LOCATION' | 'STOCK_BELOW_RESERVED' | 'ON_HAND_ABOVE_MAX';
  r_movement: string | null;
  r_reserved: number | null;
  r_inventory: string | null;
}
