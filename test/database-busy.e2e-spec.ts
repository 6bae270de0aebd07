import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { uniqueSku, waitForStatus } from './support/orders.js';
import { expectProblem } from './support/problem.js';
import { RawConnection } from './support/raw-http.js';

/**
 * "The database is busy" (API.md, "Errors", Here). A Try, a claim or an order's move that meets a
 * SKU row another transaction holds past its lock wait (0.5 s) is sent again, over about 3.6 s:
 * a row held for a second is waited out (a Try answers 201; a Confirm whose charge went through
 * answers 200, charged once). A row held for good ends in 503 SERVICE_UNAVAILABLE with
 * `Retry-After: 1`, having reserved nothing — on the fast path and through Fastify alike; once the
 * row is free the same request succeeds.
 */
// The gateway's answer is what these Confirms wait on first: a loaded machine must not turn it into
// an unknown outcome (the suite's 300 ms), which would answer 202 before any row is met.
const h = useHarness({ PAYMENT_TIMEOUT_MS: '2000' });
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

/** Holds the SKU row for `ms` while `work` runs, then lets it go, whether or not `work` has ended. */
async function holdingTheSkuFor<T>(ms: number, work: () => Promise<T>): Promise<T> {
  const held = await h.db.pool.connect();
  await held.query('BEGIN');
  await held.query('SELECT 1 FROM skus WHERE sku = $1 FOR NO KEY UPDATE', [sku]);
  const released = new Promise((r) => setTimeout(r, ms)).then(async () => {
    await held.query('ROLLBACK');
    held.release();
  });
  try {
    return await work();
  } finally {
    await released;
  }
}

async function retries(engine: string): Promise<number> {
  const text = (await h.api.get('/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`tcc_batch_retries_total{engine="${engine}"}`));
  return Number(line?.split(' ')[1]);
}

const body = { customerId: 'c-busy', items: [{ sku, quantity: 1 }] };

it('a row held for a second is waited out: the Try answers 201, not 503', async () => {
  const before = await retries('try');
  const reservedBefore = (await h.api.get(`/inventory/${sku}`)).body.reserved;
  const order = await holdingTheSkuFor(1200, () => h.api.order(randomUUID(), body));
  expect(order.status).toBe(201);
  expect(await retries('try')).toBeGreaterThan(before);
  expect((await h.api.get(`/inventory/${sku}`)).body.reserved).toBe(reservedBefore + 1);
  expect((await h.api.post(`/orders/${order.body.id}/cancel`, {})).status).toBe(200);
});

it('a Confirm whose charge went through while the row is held answers 200 CONFIRM_SUCCESS, charged once', async () => {
  const order = await h.api.order(randomUUID(), body);
  expect(order.status).toBe(201);
  const before = await retries('apply');
  const confirmed = await holdingTheSkuFor(1200, () => h.api.post(`/orders/${order.body.id}/confirm`, { paymentToken: 'tok_ok' }));
  expect({ status: confirmed.status, state: confirmed.body.status }).toEqual({ status: 200, state: 'CONFIRM_SUCCESS' });
  expect(await retries('apply')).toBeGreaterThan(before);
  expect(await h.sim.chargesFor(order.body.id)).toMatchObject({ succeeded: 1 });
});

it('a Confirm whose charge went through but whose row stays held past the retries: 503, then the service finishes it, charged once', async () => {
  const order = await h.api.order(randomUUID(), body);
  expect(order.status).toBe(201);
  const confirmed = await holdingTheSku(() => h.api.post(`/orders/${order.body.id}/confirm`, { paymentToken: 'tok_ok' }));
  expectProblem(confirmed, 503, 'SERVICE_UNAVAILABLE');
  expect(await h.sim.chargesFor(order.body.id)).toMatchObject({ succeeded: 1 });
  // The attempt is still its own (its step's lease): a Confirm sent again answers the order as it stands.
  const again = await h.api.post(`/orders/${order.body.id}/confirm`, { paymentToken: 'tok_ok' });
  expect(again.status).toBeLessThan(500);
  // Once the lease runs out the service takes the step again with the same gateway key.
  expect((await waitForStatus(h.api, order.body.id, ['CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'], 30_000)).status).toBe('CONFIRM_SUCCESS');
  expect(await h.sim.chargesFor(order.body.id)).toMatchObject({ succeeded: 1 });
});

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
