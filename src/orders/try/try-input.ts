import { AppError } from '../../common/errors.js';
import { requestHash } from '../../common/request-hash.js';
import { IDEMPOTENCY_KEY_PATTERN, requireDistinctSkus } from '../../http/schemas.js';
import { validateBody } from '../../http/validation.js';
import { CreateOrderBody } from '../orders.schemas.js';
import type { TryRequest } from './try-engine.js';

/**
 * The one check of a Try's input, whoever serves the request (the Nest controller and the fast
 * path both go through OrderAnswers), in the contract's order: the body against its schema, then
 * the Idempotency-Key header, then each SKU once. Throws VALIDATION_FAILED; returns what the
 * engine reserves, with the hash the key is bound to.
 */
export function tryRequestOf(key: string | string[] | undefined, raw: unknown): TryRequest {
  const body = validateBody(CreateOrderBody, raw);
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw AppError.validation([{ field: 'Idempotency-Key', message: 'Idempotency-Key header required: 1-255 characters of [A-Za-z0-9_.:-]' }]);
  }
  requireDistinctSkus(body.items);
  return { key, hash: requestHash(raw), customerId: body.customerId, items: body.items, locationIds: body.locationIds ?? [], paymentToken: body.payment?.paymentToken };
}
