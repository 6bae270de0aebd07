import { AppError } from '../../common/errors.js';
import type { ProbeRow, TryBatchRow, TryRefusal } from './try.sql.js';

/** What a refusal's message names beyond the row: the Try's customer and allowed locations. */
export interface RefusedTry {
  customerId: string;
  locationIds: readonly string[];
}

type Row = TryBatchRow | ProbeRow;

/**
 * Each refusal tcc_try_batch or tcc_probe can answer, as the contract's error: one entry per
 * outcome of TryRefusal, so an outcome the SQL gains cannot go unmapped (the compiler refuses a
 * missing one).
 */
const TRY_REFUSALS: { readonly [O in TryRefusal]: (row: Row, req: RefusedTry, holdLimit: number) => AppError } = {
  INSUFFICIENT_STOCK: (row, req) =>
    new AppError('INSUFFICIENT_STOCK', `only ${row.r_available} of ${row.r_sku} available${req.locationIds.length ? ' at the allowed locations' : ''}, ${row.r_requested} requested`, {
      sku: row.r_sku,
      requested: row.r_requested,
      available: row.r_available,
    }),
  UNKNOWN_SKU: (row) => new AppError('UNKNOWN_SKU', `SKU ${row.r_sku} does not exist`, { sku: row.r_sku }),
  UNKNOWN_LOCATION: (row) => new AppError('UNKNOWN_LOCATION', `location ${row.r_location} does not exist`, { locationId: row.r_location }),
  CURRENCY_MISMATCH: () => new AppError('CURRENCY_MISMATCH', 'the order mixes SKUs priced in different currencies'),
  HOLD_LIMIT_REACHED: (_row, req, holdLimit) => new AppError('HOLD_LIMIT_REACHED', `customer ${req.customerId} already holds ${holdLimit} orders`, { limit: holdLimit }),
  IDEMPOTENCY_KEY_REUSED: () => new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with a different request body'),
  IDEMPOTENCY_IN_PROGRESS: () => new AppError('IDEMPOTENCY_IN_PROGRESS', 'a request with this Idempotency-Key is still running; retry shortly'),
};

/** The refusal as the contract's error; an outcome the table does not know (a database ahead of this code) is a fault, not an answer. */
export function tryRefusal(outcome: TryRefusal, row: Row, req: RefusedTry, holdLimit: number): AppError {
  const refuse = Object.hasOwn(TRY_REFUSALS, outcome) ? TRY_REFUSALS[outcome] : undefined;
  if (!refuse) throw new Error(`tcc_try_batch answered ${outcome}`);
  return refuse(row, req, holdLimit);
}
