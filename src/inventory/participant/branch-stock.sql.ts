import { statement } from '../../database/db.js';

/**
 * An outside branch's stock, through the SQL functions beside this file: its Try allocates and
 * reserves (reserve-branch.sql, tcc_branch_reserve), its Confirm sells and its Cancel releases
 * exactly what the Try reserved where it reserved it (settle-branch.sql, tcc_branch_settle).
 */
export const BRANCH_STOCK_SQL = {
  reserve: statement(
    'branch_reserve',
    `SELECT r_outcome, r_status, r_sku, r_requested, r_available, r_location, r_expires_at
       FROM tcc_branch_reserve($1, $2::text[], $3::int[], $4::text[], $5, $6::float8)`,
  ),
  settle: statement('branch_settle', `SELECT tcc_branch_settle($1, $2, $3::boolean)`),
} as const;

export interface ReserveRow {
  r_outcome: 'reserved' | 'repeated' | 'TRANSACTION_CANCELED' | 'UNKNOWN_SKU' | 'UNKNOWN_LOCATION' | 'CURRENCY_MISMATCH' | 'INSUFFICIENT_STOCK';
  r_status: 'RESERVED' | 'CONFIRMED' | 'CANCELED' | null;
  r_sku: string | null;
  r_requested: number | null;
  r_available: number | null;
  r_location: string | null;
  r_expires_at: Date | null;
}
