import { statement } from '../../database/db.js';

/**
 * The Try's two calls, one per batch: tcc_try_batch (try-batch.sql) reserves, tcc_probe
 * (probe.sql) only judges, on the last committed state and with no lock on any row.
 */
export const TRY_SQL = {
  tryBatch: statement(
    'orders_try_batch',
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available
       FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::int[], $8::float8, $9::int, $10::text[], $11::boolean)`,
  ),

  /** The sold-out probe: tcc_try_batch's judgement on the last committed state, with no lock on any row. Lines name their order. */
  probe: statement(
    'orders_probe',
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[])`,
  ),
} as const;
