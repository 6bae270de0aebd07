import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { uniqueSku } from './support/orders.js';
import { expectProblem } from './support/problem.js';
import { RawConnection } from './support/raw-http.js';

/**
 * A 503 that means "the database is busy" (API.md, "Errors", Here): a Try that meets a SKU row
 * another transaction holds longer than it waits (its lock_timeout, 0.5 s) answers 503
 * SERVICE_UNAVAILABLE with `Retry-After: 1`, having reserved nothing — on the fast path and
 * through Fastify alike; once the row is free the same request succeeds.
 */
const h = useHarness();
const sku = uniqueSku('BUSY');

beforeAll(async () => {
  expect((await h.api.putSku(sku, 10)).status).toBe(200);
});

async function holdingTheSku<T>(work: () => Promise<T>): Promise<T> {
  const held = await h.db.pool.connect();
  try {
    await held.query('BEGIN');
    await held.query('SELECT 1 FROM skus WHERE sku = $1 FOR NO KEY UPDATE', [sku]);
    return await work();
  } finally {
    await held.query('ROLLBACK');
    held.release();
  }
}

const body = { customerId: 'c-busy', items: [{ sku, quantity: 1 }] };

it('the fast path: 503 with Retry-After 1 while the SKU row is held, nothing reserved; then 201', async () => {
  const key = randomUUID();
  const busy = await holdingTheSku(() => h.api.order(key, body));
  expectProblem(busy, 503, 'SERVICE_UNAVAILABLE');
  expect(busy.body.detail).toMatch(/busy/);
  expect(busy.headers.get('retry-after')).toBe('1');
  expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ reserved: 0 });
  expect((await h.api.order(key, body)).status).toBe(201);
});

it('through Fastify (a chunked body): the same 503 with Retry-After 1', async () => {
  const reservedBefore = (await h.api.get(`/inventory/${sku}`)).body.reserved;
  const text = JSON.stringify(body);
  const answer = await holdingTheSku(async () => {
    const c = new RawConnection(h.svc.url);
    c.write(`POST /orders HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\nTransfer-Encoding: chunked\r\n\r\n${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`);
    try {
      return await c.next(15_000);
    } finally {
      c.destroy();
    }
  });
  expect({ status: answer.status, code: answer.body?.code, retryAfter: answer.headers['retry-after'] }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '1' });
  expect((await h.api.get(`/inventory/${sku}`)).body.reserved).toBe(reservedBefore);
});
