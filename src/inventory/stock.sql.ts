import { Sql, statement } from '../database/db.js';

/**
 * The reservation path, in one place and in SQL this project controls. Every stock movement is
 * a single conditional UPDATE on the SKU row; the CHECK (0 <= reserved <= on_hand) constraint is
 * the last line of defence if a statement here were ever wrong.
 */
export interface SkuRow {
  sku: string;
  name: string;
  price_minor: string;
  currency: string;
  on_hand: number;
  reserved: number;
}

export interface ReservedLine {
  sku: string;
  quantity: number;
  currency: string;
}

const SQL = {
  find: statement('stock_find', `SELECT sku, name, price_minor, currency, on_hand, reserved FROM skus WHERE sku = ANY($1::text[])`),
  reserve: statement(
    'stock_reserve',
    `UPDATE skus SET reserved = reserved + $2, updated_at = now()
      WHERE sku = $1 AND on_hand - reserved >= $2
      RETURNING currency`,
  ),
  available: statement('stock_available', `SELECT on_hand - reserved AS available FROM skus WHERE sku = $1`),
  record: statement(
    'stock_record_reservation',
    `INSERT INTO reservations (transaction_id, sku, quantity)
     SELECT $1, sku, quantity FROM unnest($2::text[], $3::int[]) AS l(sku, quantity)`,
  ),
  lockBranch: statement(
    'stock_lock_branch',
    `SELECT s.sku FROM skus s JOIN reservations r ON r.sku = s.sku
      WHERE r.transaction_id = $1 ORDER BY s.sku COLLATE "C" FOR NO KEY UPDATE OF s`,
  ),
  release: statement(
    'stock_release',
    `UPDATE skus s SET reserved = s.reserved - r.quantity, updated_at = now()
       FROM (SELECT sku, quantity FROM reservations WHERE transaction_id = $1 ORDER BY sku COLLATE "C") r
      WHERE s.sku = r.sku`,
  ),
  commit: statement(
    'stock_commit',
    `UPDATE skus s SET on_hand = s.on_hand - r.quantity, reserved = s.reserved - r.quantity, updated_at = now()
       FROM (SELECT sku, quantity FROM reservations WHERE transaction_id = $1 ORDER BY sku COLLATE "C") r
      WHERE s.sku = r.sku`,
  ),
  upsert: statement(
    'stock_upsert',
    `INSERT INTO skus (sku, name, price_minor, currency, on_hand) VALUES ($1, coalesce($2, ''), $3, $4, $5)
     ON CONFLICT (sku) DO UPDATE SET name = coalesce($2, skus.name), price_minor = $3, currency = $4,
                                     on_hand = $5, updated_at = now()
     RETURNING sku, name, price_minor, currency, on_hand, reserved`,
  ),
} as const;

export const stockSql = {
  /** Reads the SKUs an order names, without locking (validation before reserving). */
  async find(sql: Sql, skus: string[]): Promise<SkuRow[]> {
    return sql.rows<SkuRow>(SQL.find, [skus]);
  },

  /** Reserves one line if enough is available; undefined when not (nothing changed). */
  async reserve(sql: Sql, sku: string, quantity: number): Promise<ReservedLine | undefined> {
    const row = await sql.one<{ currency: string }>(SQL.reserve, [sku, quantity]);
    return row && { sku, quantity, currency: row.currency };
  },

  async available(sql: Sql, sku: string): Promise<number | undefined> {
    const row = await sql.one<{ available: number }>(SQL.available, [sku]);
    return row?.available;
  },

  async recordReservation(sql: Sql, transactionId: string, lines: { sku: string; quantity: number }[]): Promise<void> {
    await sql.exec(
      SQL.record,
      [transactionId, lines.map((l) => l.sku), lines.map((l) => l.quantity)],
    );
  },

  /**
   * Locks a branch's SKU rows in SKU order, the same order Try reserves in (byte order: COLLATE
   * "C", like the sort in participant.service.ts), so a Confirm or Cancel of a multi-line order can
   * never deadlock with a concurrent Try. NO KEY UPDATE, like the UPDATEs that follow: it does not
   * wait for the KEY SHARE locks that concurrent Tries' foreign keys take.
   */
  async lockBranchSkus(sql: Sql, transactionId: string): Promise<void> {
    await sql.rows(
      SQL.lockBranch,
      [transactionId],
    );
  },

  /** Gives a branch's reserved quantities back (Cancel). Call lockBranchSkus first. */
  async release(sql: Sql, transactionId: string): Promise<number> {
    return sql.exec(
      SQL.release,
      [transactionId],
    );
  },

  /** Creates or updates a SKU; a CHECK violation means on_hand would fall below reserved. */
  async upsert(sql: Sql, sku: string, input: { name?: string; priceMinor: number; currency: string; onHand: number }): Promise<SkuRow> {
    return (await sql.one<SkuRow>(SQL.upsert, [sku, input.name ?? null, input.priceMinor, input.currency, input.onHand]))!;
  },

  /** Turns a branch's reservation into a sale (Confirm): on_hand and reserved both fall. Lock first. */
  async commit(sql: Sql, transactionId: string): Promise<number> {
    return sql.exec(
      SQL.commit,
      [transactionId],
    );
  },
};
