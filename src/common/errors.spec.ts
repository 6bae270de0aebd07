import { AppError, ERROR_CODES, statusOf, toProblem } from './errors.js';

describe('contract error codes', () => {
  it('maps every code to the status API.md gives it', () => {
    const expected: Record<string, number> = {
      UNAUTHORIZED: 401,
      FORBIDDEN: 403,
      RATE_LIMITED: 429,
      HOLD_LIMIT_REACHED: 409,
      EXTENSION_LIMIT_REACHED: 409,
      PAYLOAD_TOO_LARGE: 413,
      REQUEST_TIMEOUT: 408,
      MALFORMED_JSON: 400,
      VALIDATION_FAILED: 400,
      NOT_FOUND: 404,
      OPERATOR_EXISTS: 409,
      IDEMPOTENCY_KEY_REUSED: 422,
      IDEMPOTENCY_IN_PROGRESS: 409,
      UNKNOWN_SKU: 422,
      UNKNOWN_LOCATION: 422,
      CURRENCY_MISMATCH: 422,
      INSUFFICIENT_STOCK: 409,
      ORDER_CANCELED: 409,
      ORDER_CONFIRMED: 409,
      TRANSACTION_CANCELED: 409,
      TRANSACTION_CONFIRMED: 409,
      NO_RESERVATION: 409,
      STOCK_BELOW_RESERVED: 409,
      STOCK_CHANGED: 409,
      SERVICE_UNAVAILABLE: 503,
      INTERNAL: 500,
    };
    for (const code of ERROR_CODES) expect([code, statusOf(code)]).toEqual([code, expected[code]]);
  });

  it('builds an RFC 9457 body with the extra members', () => {
    const p = toProblem('INSUFFICIENT_STOCK', 'not enough', { sku: 'A', requested: 3, available: 1 });
    expect(p).toEqual({
      type: expect.stringMatching(/insufficient-stock$/),
      title: 'Conflict',
      status: 409,
      detail: 'not enough',
      code: 'INSUFFICIENT_STOCK',
      sku: 'A',
      requested: 3,
      available: 1,
    });
  });

  it('carries field errors on validation failures', () => {
    const e = AppError.validation([{ field: 'items', message: 'must not be empty' }]);
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.extra).toEqual({ errors: [{ field: 'items', message: 'must not be empty' }] });
  });
});
