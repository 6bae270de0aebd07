import { Sql, statement } from '../../database/db.js';

const SQL = {
  insert: statement(
    'barrier_insert',
    `INSERT INTO tcc_barrier (transaction_id, op, reason) VALUES ($1, $2, $3) ON CONFLICT (transaction_id, op) DO NOTHING`,
  ),
  lockTry: statement('barrier_lock_try', `SELECT reason FROM tcc_barrier WHERE transaction_id = $1 AND op = 'try' FOR UPDATE`),
  ops: statement('barrier_ops', `SELECT op FROM tcc_barrier WHERE transaction_id = $1`),
} as const;

export type BarrierOp = 'try' | 'confirm' | 'cancel';
export type BranchStatus = 'RESERVED' | 'CONFIRMED' | 'CANCELED';

/**
 * DTM-style sub-transaction barrier. Every phase first inserts its (transaction, op) row with
 * ON CONFLICT DO NOTHING inside the phase's own local transaction, so:
 * - a repeated phase finds its row and does nothing (idempotency);
 * - Cancel inserts the 'try' row itself (reason 'cancel'): a Cancel with no Try before it is an
 *   empty rollback, and a Try arriving after it conflicts and is refused (no hanging);
 * - Confirm and Cancel lock the 'try' row, so they run one after the other and see each other.
 * A phase whose business step fails rolls back its barrier row with everything else.
 */
export const barrier = {
  /** Returns true when this call inserted the row, i.e. the phase runs for the first time. */
  async insert(sql: Sql, transactionId: string, op: BarrierOp, reason: BarrierOp): Promise<boolean> {
    const inserted = await sql.exec(SQL.insert, [transactionId, op, reason]);
    return inserted === 1;
  },

  /** Locks the branch's 'try' row until the end of the transaction; returns who wrote it. */
  async lockTry(sql: Sql, transactionId: string): Promise<BarrierOp | undefined> {
    const row = await sql.one<{ reason: BarrierOp }>(SQL.lockTry, [transactionId]);
    return row?.reason;
  },

  /** The branch's state as the barrier records it; undefined when nothing is known of it. */
  async status(sql: Sql, transactionId: string): Promise<BranchStatus | undefined> {
    const rows = await sql.rows<{ op: BarrierOp }>(SQL.ops, [transactionId]);
    const ops = new Set(rows.map((r) => r.op));
    if (ops.has('cancel')) return 'CANCELED';
    if (ops.has('confirm')) return 'CONFIRMED';
    if (ops.has('try')) return 'RESERVED';
    return undefined;
  },
};
