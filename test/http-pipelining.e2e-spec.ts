import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { uniqueSku } from './support/orders.js';
import { RawConnection, RawReply } from './support/raw-http.js';

/**
 * Requests sent one after another on one connection are answered in order, each complete request
 * with its own answer, also when what follows it on the connection is not HTTP (API.md, "Errors"):
 * then comes a 400 for the junk, and the connection closes. Over a raw socket, on the fast path
 * (POST /orders) and through Fastify (an adjustment, which moves stock: losing its answer would
 * make a client retry it).
 */
const h = useHarness();
let sku: string;

beforeAll(async () => {
  sku = uniqueSku('PIPE');
  expect((await h.api.putSku(sku, 100)).status).toBe(200);
});

/** 2 KiB that no HTTP parser takes for a request. */
const JUNK = Buffer.concat([Buffer.from('\u0001\u0002 not http at all \u0000'), Buffer.alloc(2048, 0xfe)]);

function request(method: string, target: string, body: unknown, headers: Record<string, string> = {}): Buffer {
  const text = JSON.stringify(body);
  const head = [`${method} ${target} HTTP/1.1`, 'Host: t', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(text)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${text}`);
}

const adjustment = (id: string, delta: number) =>
  request('POST', `/admin/inventory/${sku}/adjustments`, { delta, reason: 'received', reference: id }, { Authorization: `Bearer ${ADMIN_TOKEN}`, 'X-Request-Id': id });
const tryOrder = (id: string) => request('POST', '/orders', { customerId: 'c-pipe', items: [{ sku, quantity: 1 }] }, { 'Idempotency-Key': randomUUID(), 'X-Request-Id': id });

function expectJunkRefused(r: RawReply): void {
  expect({ status: r.status, code: r.body?.code, type: r.headers['content-type'] }).toEqual({ status: 400, code: 'VALIDATION_FAILED', type: 'application/problem+json; charset=utf-8' });
  expect(r.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
}

async function onHand(): Promise<number> {
  return (await h.api.get(`/inventory/${sku}`)).body.onHand;
}

describe('a complete request followed on its connection by junk gets its own answer first', () => {
  it.each([
    ['in the same write', 0],
    ['a moment later', 30],
  ])('Fastify: POST /admin/inventory/{sku}/adjustments, then 2 KiB of junk %s', async (_how, laterMs) => {
    const before = await onHand();
    const c = new RawConnection(h.svc.url);
    const id = `pipe-adjust-${randomUUID().slice(0, 8)}`;
    if (laterMs === 0) c.write(Buffer.concat([adjustment(id, 3), JUNK]));
    else {
      c.write(adjustment(id, 3));
      await new Promise((r) => setTimeout(r, laterMs));
      c.write(JUNK);
    }
    const first = await c.next(10_000);
    expect(first.status).toBe(201);
    expect(first.headers['x-request-id']).toBe(id);
    expect(first.body.movement).toMatchObject({ kind: 'adjustment', delta: 3, reference: id });
    expectJunkRefused(await c.next(10_000));
    expect(await c.closesWithin(2000)).toBe(true);
    expect(await onHand()).toBe(before + 3);
  });

  it('the fast path: POST /orders, then junk, in one write', async () => {
    const c = new RawConnection(h.svc.url);
    const id = `pipe-try-${randomUUID().slice(0, 8)}`;
    c.write(Buffer.concat([tryOrder(id), JUNK]));
    const first = await c.next(10_000);
    expect(first.status).toBe(201);
    expect(first.headers['x-request-id']).toBe(id);
    expect(first.body).toMatchObject({ status: 'TRY_SUCCESS', customerId: 'c-pipe' });
    expectJunkRefused(await c.next(10_000));
    expect(await c.closesWithin(2000)).toBe(true);
  });

  it('three complete requests of both kinds, then junk: three answers in order, then the 400', async () => {
    const before = await onHand();
    const c = new RawConnection(h.svc.url);
    const ids = ['a', 'b', 'c'].map((x) => `pipe-${x}-${randomUUID().slice(0, 8)}`);
    c.write(Buffer.concat([adjustment(ids[0], 5), tryOrder(ids[1]), adjustment(ids[2], -2), JUNK]));
    const answers = [await c.next(10_000), await c.next(10_000), await c.next(10_000)];
    expect(answers.map((a) => [a.status, a.headers['x-request-id']])).toEqual([
      [201, ids[0]],
      [201, ids[1]],
      [201, ids[2]],
    ]);
    expectJunkRefused(await c.next(10_000));
    expect(await c.closesWithin(2000)).toBe(true);
    expect(await onHand()).toBe(before + 3);
  });

  it('junk alone still gets its 400 at once, and a request cut off mid-body by junk is not run', async () => {
    const c = new RawConnection(h.svc.url);
    c.write(JUNK);
    expectJunkRefused(await c.next(5000));
    expect(await c.closesWithin(2000)).toBe(true);

    const before = await onHand();
    const d = new RawConnection(h.svc.url);
    d.write(Buffer.from(`POST /admin/inventory/${sku}/adjustments HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`));
    const cut = await d.next(5000).catch(() => undefined);
    if (cut) expect(cut.status).toBeGreaterThanOrEqual(400);
    expect(await d.closesWithin(2000)).toBe(true);
    expect(await onHand()).toBe(before);
  });
});
