import { statement } from '../database/db.js';

/**
 * The stock statements: a SKU's inventory JSON as Postgres builds it (stock/inventory-json.sql),
 * the SKU row itself, and a location's on hand set through the ledger (stock/set-stock.sql).
 * Every change of a SKU's stock holds its SKU row first (the guard of its stock rows).
 */
export const STOCK_SQL = {
  inventory: statement('stock_inventory', `SELECT tcc_inventory_json($1)::text AS body`),

  /** Creates or updates the SKU row (not its stock); a threshold not given keeps today's (0 for a new SKU). */
  upsertSku: statement(
    'stock_upsert_sku',
    `INSERT INTO skus (sku, name, price_minor, currency, low_stock_threshold) VALUES ($1, coalesce($2, ''), $3, $4, coalesce($5, 0))
     ON CONFLICT (sku) DO UPDATE SET name = coalesce($2, skus.name), price_minor = $3, currency = $4,
                                     low_stock_threshold = coalesce($5, skus.low_stock_threshold), updated_at = now()`,
  ),

  setStock: statement(
    'stock_set',
    `SELECT r_outcome, r_current, r_reserved FROM tcc_stock_set($1, $2, $3::int, $4::int, $5::int, $6, $7)`,
  ),
} as const;

export interface SetStockRow {
  r_outcome: 'ok' | 'UNKNOWN_SKU' | 'UNKNOWN_LOCATION' | 'STOCK_CHANGED' | 'STOCK_BELOW_RESERVED';
  r_current: number | null;
  r_reserved: number | null;
}
