import { Sql, statement } from '../../database/db.js';

export interface ReservedLine {
  sku: string;
  quantity: number;
  currency: string;
}

const SQL = {
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
} as const;

/**
 * An outside branch's stock, in SQL this project controls: every movement is a single conditional
 * UPDATE on the SKU row, and what a branch holds is written in `reservations`, so Confirm and
 * Cancel move exactly that.
 */
export const branchStock = {
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
    await sql.exec(SQL.record, [transactionId, lines.map((l) => l.sku), lines.map((l) => l.quantity)]);
  },

  /**
   * Locks a branch's SKU rows in SKU order, the same order Try reserves in (byte order: COLLATE
   * "C", like the sort in participant.service.ts), so a Confirm or Cancel of a multi-line order can
   * never deadlock with a concurrent Try. NO KEY UPDATE, like the UPDATEs that follow: it does not
   * wait for the KEY SHARE locks that concurrent Tries' foreign keys take.
   */
  async lockBranchSkus(sql: Sql, transactionId: string): Promise<void> {
    await sql.rows(SQL.lockBranch, [transactionId]);
  },

  /** Gives a branch's reserved quantities back (Cancel). Call lockBranchSkus first. */
  async release(sql: Sql, transactionId: string): Promise<number> {
    return sql.exec(SQL.release, [transactionId]);
  },

  /** Turns a branch's reservation into a sale (Confirm): on_hand and reserved both fall. Lock first. */
  async commit(sql: Sql, transactionId: string): Promise<number> {
    return sql.exec(SQL.commit, [transactionId]);
  },
};
