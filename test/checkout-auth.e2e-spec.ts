import { randomUUID } from 'node:crypto';
import { call, makeKey } from './support/access.js';
import { useHarness } from './support/harness.js';
import { uniqueSku } from './support/orders.js';
import { expectProblem } from './support/problem.js';
import { rawRequest } from './support/raw-http.js';

/**
 * CHECKOUT_AUTH=required (API.md, "Checkout routes"): every checkout route needs a credential with
 * `checkout` — 401 without one, 403 with a key that lacks it — and the fast path that answers Try
 * and Confirm without Fastify is not a way around it.
 */
const h = useHarness({ CHECKOUT_AUTH: 'required', RESERVATION_TTL_MS: '600000' });

let sku: string;
let checkout: string;
let reader: string;

beforeAll(async () => {
  sku = uniqueSku('CA');
  expect((await h.api.putSku(sku, 50)).status).toBe(200);
  checkout = (await makeKey(h.svc.url, ['checkout'])).key;
  reader = (await makeKey(h.svc.url, ['inventory:read'])).key;
});

const tryBody = () => ({ customerId: 'c-ca', items: [{ sku, quantity: 1 }] });

describe('CHECKOUT_AUTH=required', () => {
  it('Try: 401 without a credential, 403 without checkout, 201 with it', async () => {
    const headers = { 'idempotency-key': randomUUID() };
    expectProblem((await call(h.svc.url, 'POST', '/orders', { bearer: '', headers, body: tryBody() })) as never, 401, 'UNAUTHORIZED');
    const forbidden = await call(h.svc.url, 'POST', '/orders', { bearer: reader, headers, body: tryBody() });
    expectProblem(forbidden as never, 403, 'FORBIDDEN');
    expect(forbidden.body.requiredScope).toBe('checkout');
    const made = await call(h.svc.url, 'POST', '/orders', { bearer: checkout, headers, body: tryBody() });
    expect(made.status).toBe(201);
    expect((await call(h.svc.url, 'POST', '/orders', { bearer: '', headers: { 'idempotency-key': randomUUID() }, body: tryBody() })).status).toBe(401);
    const id = made.body.id;
    for (const [method, path, body] of [
      ['GET', `/orders/${id}`, undefined],
      ['POST', `/orders/${id}/extend`, { extendByMs: 5000 }],
      ['POST', `/orders/${id}/confirm`, {}],
      ['POST', `/orders/${id}/cancel`, undefined],
      ['GET', `/inventory/${sku}`, undefined],
    ] as const) {
      expect({ path, status: (await call(h.svc.url, method, path, { bearer: '', body })).status }).toEqual({ path, status: 401 });
      expect({ path, status: (await call(h.svc.url, method, path, { bearer: reader, body })).status }).toEqual({ path, status: 403 });
    }
    expect((await call(h.svc.url, 'GET', `/orders/${id}`, { bearer: checkout })).status).toBe(200);
    expect((await call(h.svc.url, 'GET', `/inventory/${sku}`, { bearer: checkout })).status).toBe(200);
    expect((await call(h.svc.url, 'POST', `/orders/${id}/confirm`, { bearer: checkout, body: {} })).status).toBe(200);
    // The root token holds every right.
    expect((await call(h.svc.url, 'GET', `/orders/${id}`)).status).toBe(200);
  });

  it('the fast path does not answer a plain Try or Confirm without a credential, and nothing is reserved', async () => {
    const before = (await call(h.svc.url, 'GET', `/inventory/${sku}`, { bearer: checkout })).body.reserved;
    const body = JSON.stringify(tryBody());
    const res = await rawRequest(
      h.svc.url,
      `POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nIdempotency-Key: ${randomUUID()}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      { closeWaitMs: 0 },
    );
    expect(res.status).toBe(401);
    const confirm = await rawRequest(h.svc.url, `POST /orders/${randomUUID()}/confirm HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, { closeWaitMs: 0 });
    expect(confirm.status).toBe(401);
    expect((await call(h.svc.url, 'GET', `/inventory/${sku}`, { bearer: checkout })).body.reserved).toBe(before);
  });

  it('health and metrics stay open', async () => {
    expect((await call(h.svc.url, 'GET', '/health/live', { bearer: '' })).status).toBe(200);
    expect((await call(h.svc.url, 'GET', '/metrics', { bearer: '' })).status).toBe(200);
  });
});
