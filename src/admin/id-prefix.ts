import { AppError } from '../common/errors.js';
import { isUuid } from '../common/uuid.js';

const ZEROS = '00000000-0000-0000-0000-000000000000';
const EFS = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/**
 * The ids an order id's start spans, lowest and highest ("3f2a9c1b" → 3f2a9c1b-0000-… to
 * 3f2a9c1b-ffff-…), so the primary key finds them; VALIDATION_FAILED for what no id starts with.
 */
export function idRange(prefix: string): [string, string] {
  const p = prefix.toLowerCase();
  const from = p + ZEROS.slice(p.length);
  const to = p + EFS.slice(p.length);
  if (p.length < 8 || !isUuid(from) || !isUuid(to)) throw AppError.validation([{ field: 'idPrefix', message: 'idPrefix must be the first 8-36 characters of an order id' }]);
  return [from, to];
}
