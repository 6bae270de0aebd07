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
       FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[], $9::text, $10::float8, $11::int, $12::text[], $13::jsonb)`,
  ),

  probe: statement(
    'orders_probe',
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available, r_location
       FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[])`,
  ),
} as const;

/** The contract's refusals a Try can answer (API.md codes), one for each order refused. */
export type TryRefusal =
  | 'INSUFFICIENT_STOCK'
  | 'UNKNOWN_SKU'
  | 'UNKNOWN_LOCATION'
  | 'CURRENCY_MISMATCH'
  | 'HOLD_LIMIT_REACHED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_IN_PROGRESS';

/** What each order of a batch came to: each row's columns beside its r_outcome. */
interface TryRowFacts {
  /** The order's place in the batch, 1-based. */
  r_idx: number;
  /** The order JSON, for an order made or replayed. */
  r_body: string | null;
  r_sku: string | null;
  r_requested: number | null;
  r_available: number | null;
  r_location: string | null;
}

/** A row of tcc_try_batch: the order made, the one this key made before, or a refusal. */
export interface TryBatchRow extends TryRowFacts {
  r_outcome: 'created' | 'replayed' | TryRefusal;
}

/** A row of tcc_probe: a replay or a refusal the last committed state decides, else 'retry' (the batch decides). */
export interface ProbeRow extends TryRowFacts {
  r_outcome: 'replayed' | 'retry' | Exclude<TryRefusal, 'HOLD_LIMIT_REACHED'>;
}
