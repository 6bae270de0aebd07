import { statement } from '../database/db.js';

/** The inventory consistency check and repair (inventory/consistency/*.sql), and what they record. */
export const CONSISTENCY_SQL = {
  /** Every stock row judged on one snapshot: how many were checked, and the mismatches. */
  check: statement(
    'consistency_check',
    `SELECT r_sku, r_location, r_reserved, r_held, r_on_hand, r_ledger, r_mismatch FROM tcc_inventory_consistency($1::text[])
      WHERE r_mismatch
     UNION ALL SELECT NULL, NULL, count(*)::int, NULL, NULL, NULL, false FROM stock`,
  ),
  repair: statement(
    'consistency_repair',
    `SELECT r_sku, r_location, r_reserved, r_held, r_on_hand, r_ledger, r_repaired FROM tcc_inventory_repair($1::text[], $2::text[], $3, $4, $5)`,
  ),
  audit: statement(
    'consistency_audit',
    `INSERT INTO admin_audit (action, actor, operator, reason, data) VALUES ('inventory.repair', $1, $2, $3, $4::jsonb)`,
  ),
  /** The scheduled check's count, read by /metrics on every process. */
  saveCount: statement(
    'consistency_save_count',
    `INSERT INTO job_state (name, state, updated_at) VALUES ('inventory-consistency', jsonb_build_object('mismatches', $1::int), now())
     ON CONFLICT (name) DO UPDATE SET state = job_state.state || jsonb_build_object('mismatches', $1::int), updated_at = now()`,
  ),
} as const;

export interface ConsistencyRow {
  r_sku: string | null;
  r_location: string | null;
  r_reserved: number;
  r_held: number;
  r_on_hand: number;
  r_ledger: number;
}
