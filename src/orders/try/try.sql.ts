import { statement } from '../../database/db.js';

/**
 * The Try's two calls, one per batch: tcc_try_batch (try-batch.sql) reserves, tcc_probe
 * (probe.sql) only judges, on the last committed state and with no lock on any row. Both take the
 * batch as flat arrays: each line names its order (1-based), and so does each allowed location.
 */
export const TRY_SQL = {
  tryBatch: statement(
    'orders_try_batch',
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available, r_location
       FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[], $9::text, $10::float8, $11::int, $12::text[])`,
  ),

  probe: statement(
    'orders_probe',
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available, r_location
       FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[])`,
  ),
} as const;
