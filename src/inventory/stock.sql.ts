import { Sql, statement } from '../database/db.js';

/** A SKU row as Postgres returns it (bigint comes back as a string). */
export interface SkuRow {
  sku: string;
  name: string;
  price_minor: string;
  currency: string;
  on_hand: number;
  reserved: number;
}

const SQL = {
  find: statement('stock_find', `SELECT sku, name, price_minor, currency, on_hand, reserved FROM skus WHERE sku = ANY($1::text[])`),
  upsert: statement(
    'stock_upsert',
    `INSERT INTO skus (sku, name, price_minor, currency, on_hand) VALUES ($1, coalesce($2, ''), $3, $4, $5)
     ON CONFLICT (sku) DO UPDATE SET name = coalesce($2, skus.name), price_minor = $3, currency = $4,
                                     on_hand = $5, updated_at = now()
     RETURNING sku, name, price_minor, currency, on_hand, reserved`,
  ),
} as const;

/**
 * The SKU rows: read and upserted here; reserved by the order engine's Try (orders/try) and by
 * outside coordinators' branches (participant/branch-stock.sql.ts). The CHECK (0 <= reserved <=
 * on_hand) constraint is the last line of defence if a statement anywhere were ever wrong.
 */
export const stockSql = {
  /** Reads SKUs without locking (validation before reserving). */
  async find(sql: Sql, skus: string[]): Promise<SkuRow[]> {
    return sql.rows<SkuRow>(SQL.find, [skus]);
  },

  /** Creates or updates a SKU; a CHECK violation means on_hand would fall below reserved. */
  async upsert(sql: Sql, sku: string, input: { name?: string; priceMinor: number; currency: string; onHand: number }): Promise<SkuRow> {
    return (await sql.one<SkuRow>(SQL.upsert, [sku, input.name ?? null, input.priceMinor, input.currency, input.onHand]))!;
  },
};
