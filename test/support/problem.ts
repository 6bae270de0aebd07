import type { TestDatabase } from './database.js';
import type { Answer } from './http.js';

/** Every contract code (API.md, "Errors"), plus INTERNAL for the defects a 500 reports. */
export const CONTRACT_CODES = [
  'UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMITED', 'PAYLOAD_TOO_LARGE', 'REQUEST_TIMEOUT', 'MALFORMED_JSON', 'VALIDATION_FAILED', 'NOT_FOUND', 'OPERATOR_EXISTS',
  'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_IN_PROGRESS', 'HOLD_LIMIT_REACHED', 'UNKNOWN_SKU', 'UNKNOWN_LOCATION', 'CURRENCY_MISMATCH',
  'INSUFFICIENT_STOCK', 'ORDER_CANCELED', 'ORDER_CONFIRMED', 'TRANSACTION_CANCELED', 'TRANSACTION_CONFIRMED',
  'NO_RESERVATION', 'EXTENSION_LIMIT_REACHED', 'STOCK_BELOW_RESERVED', 'STOCK_CHANGED', 'SERVICE_UNAVAILABLE',
];

/** The contract's problem+json shape, with the HTTP status mirrored in the body and no stack trace. */
export function expectProblem(res: Answer, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String), code });
  expect(JSON.stringify(res.body)).not.toMatch(/"stack"|\n\s+at |\(\/[^)]*:\d+:\d+\)|node:internal/);
}

export function expectValidation(res: Answer, field?: RegExp): void {
  expectProblem(res, 400, 'VALIDATION_FAILED');
  expect(Array.isArray(res.body.errors)).toBe(true);
  expect(res.body.errors.length).toBeGreaterThan(0);
  // `line`: a CSV import's row, its line in the file.
  for (const e of res.body.errors) expect(e).toEqual({ field: expect.any(String), message: expect.any(String), ...('line' in e ? { line: expect.any(Number) } : {}) });
  if (field) expect(res.body.errors.map((e: { field: string }) => e.field)).toContainEqual(expect.stringMatching(field));
}

/**
 * What a refused request must leave as it was: every SKU row, every order row, the timeline, the
 * barrier, outside branches, webhooks and their outbox, and the periodic jobs' state. Digests and
 * counts, compared before and after.
 */
export async function fingerprint(db: TestDatabase): Promise<Record<string, string>> {
  const digest = (table: string, order: string) =>
    `(SELECT count(*) || ':' || md5(coalesce(string_agg(row_to_json(t)::text, ',' ORDER BY ${order}), '')) FROM ${table} t)`;
  const [row] = await db.query<Record<string, string>>(`
    SELECT ${digest('skus', 't.sku')} AS skus,
           ${digest('orders', 't.id')} AS orders,
           (SELECT count(*) || ':' || coalesce(max(id), 0) FROM order_events) AS events,
           ${digest('tcc_barrier', 't.transaction_id, t.op')} AS barrier,
           ${digest('reservations', 't.transaction_id, t.sku')} AS reservations,
           ${digest('webhooks', 't.name')} AS webhooks,
           (SELECT count(*)::text FROM webhook_deliveries) AS deliveries,
           ${digest('job_state', 't.name')} AS job_state`);
  return row;
}
