import { tryRefusal } from './try-refusals.js';
import type { TryBatchRow, TryRefusal } from './try.sql.js';

const row: TryBatchRow = { r_idx: 1, r_outcome: 'INSUFFICIENT_STOCK', r_body: null, r_sku: 'A', r_requested: 3, r_available: 1, r_location: 'north' };
const req = { customerId: 'c-1', locationIds: [] };

describe('tryRefusal', () => {
  it.each<TryRefusal>(['INSUFFICIENT_STOCK', 'UNKNOWN_SKU', 'UNKNOWN_LOCATION', 'CURRENCY_MISMATCH', 'HOLD_LIMIT_REACHED', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_IN_PROGRESS'])(
    '%s is answered with the contract code of that name',
    (outcome) => {
      expect(tryRefusal(outcome, { ...row, r_outcome: outcome }, req, 5).code).toBe(outcome);
    },
  );

  it('names what each refusal is about', () => {
    expect(tryRefusal('INSUFFICIENT_STOCK', row, req, 5)).toMatchObject({ message: 'only 1 of A available, 3 requested', extra: { sku: 'A', requested: 3, available: 1 } });
    expect(tryRefusal('INSUFFICIENT_STOCK', row, { ...req, locationIds: ['north'] }, 5).message).toBe('only 1 of A available at the allowed locations, 3 requested');
    expect(tryRefusal('UNKNOWN_LOCATION', row, req, 5).extra).toEqual({ locationId: 'north' });
    expect(tryRefusal('HOLD_LIMIT_REACHED', row, req, 5)).toMatchObject({ message: 'customer c-1 already holds 5 orders', extra: { limit: 5 } });
  });

  it('an outcome it does not know is a fault, not an answer', () => {
    expect(() => tryRefusal('SOMETHING_NEW' as TryRefusal, row, req, 5)).toThrow('tcc_try_batch answered SOMETHING_NEW');
    expect(() => tryRefusal('toString' as TryRefusal, row, req, 5)).toThrow('tcc_try_batch answered toString');
  });
});
