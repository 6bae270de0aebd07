import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { Answer } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { expectValidation, fingerprint } from './support/problem.js';
import { RawConnection, RawReply } from './support/raw-http.js';

/**
 * What HTTP itself can get wrong: a request that never arrives in full is answered 408
 * REQUEST_TIMEOUT once REQUEST_TIMEOUT_MS (the contract's 30 s, shortened here) has passed since
 * it began, and its connection closed; an unsupported Expect, a missing
 * Host and CONNECT — which node:http answers bare or drops — are problem+json with X-Request-Id.
 * Both ways into the service are exercised: the fast path (POST /orders in its plain form) and
 * Fastify (POST /orders?x=1, PUT /admin/inventory/{sku}, chunked bodies), and OPS_PORT too.
 */
/** REQUEST_TIMEOUT_MS here; the default (30 s) is held by src/config/env.schema.spec.ts. */
const LIMIT_MS = 6000;
/** How often the tricklers below send a piece: all of theirs go before the limit. */
const EVERY_MS = LIMIT_MS / 6;
const h = useHarness({ OPS_PORT: '0', REQUEST_TIMEOUT_MS: String(LIMIT_MS) });
let ops: string;
let sku: string;

beforeAll(async () => {
  const port = /"opsPort":(\d+)/.exec(h.svc.logs.join('\n'))?.[1];
  expect(port).toBeDefined();
  ops = `http://127.0.0.1:${port}`;
  sku = uniqueSku('FRAME');
  expect((await h.api.putSku(sku, 10)).status).toBe(200);
});

const ADMIN = `Authorization: Bearer ${ADMIN_TOKEN}\r\n`;
const tryHead = (target: string, extra = '') => `POST ${target} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\n${extra}`;
const putHead = (name: string, extra = '') => `PUT /admin/inventory/${name} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n${ADMIN}${extra}`;
const tryBody = () => JSON.stringify({ customerId: 'c-frame', items: [{ sku, quantity: 1 }] });

/** A raw answer in the shape the problem assertions take. */
const answer = (r: RawReply): Answer => ({ status: r.status, body: r.body, headers: new Headers(r.headers) });

function expectProblemAnswer(r: RawReply, status: number, code: string, requestId?: string): void {
  expect({ status: r.status, code: r.body?.code, type: r.headers['content-type'] }).toEqual({ status, code, type: 'application/problem+json; charset=utf-8' });
  expect(r.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String) });
  expect(r.headers['x-request-id']).toEqual(requestId ?? expect.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/));
}

describe('a request whose body does not arrive in full within REQUEST_TIMEOUT_MS', () => {
  it('is answered 408 REQUEST_TIMEOUT at REQUEST_TIMEOUT_MS and its connection closed, on the fast path, through Fastify and on OPS_PORT; nothing else is held up', async () => {
    const ordersBefore = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    const stalled = `${sku}-STALLED`;
    const late: [string, string | undefined, (c: RawConnection) => void][] = [
      // [what, the X-Request-Id sent, what is sent]
      ['fast path: Content-Length 100, 2 bytes sent', 'late-fast-short', (c) => c.write(`${tryHead('/orders', 'X-Request-Id: late-fast-short\r\n')}Content-Length: 100\r\n\r\n{}`)],
      // (The tricklers stop a piece before the limit, so no byte of theirs races the 408.)
      ['fast path: a byte at a time', undefined, (c) => c.trickle([`${tryHead('/orders')}Content-Length: 100\r\n\r\n`, ...'{"cus'], EVERY_MS)],
      ['Fastify (a query string): Content-Length 100, 2 bytes sent', 'late-fastify-short', (c) => c.write(`${tryHead('/orders?x=1', 'X-Request-Id: late-fastify-short\r\n')}Content-Length: 100\r\n\r\n{}`)],
      ['Fastify (PUT /admin/inventory): a byte at a time', undefined, (c) => c.trickle([`${putHead(stalled)}Content-Length: 100\r\n\r\n`, ...'{"pri'], EVERY_MS)],
      ['Fastify (chunked Try): no last chunk', 'late-chunked', (c) => c.write(`${tryHead('/orders', 'X-Request-Id: late-chunked\r\nTransfer-Encoding: chunked\r\n')}\r\n2\r\n{}\r\n`)],
      ['Fastify (chunked PUT): no last chunk', undefined, (c) => c.write(`${putHead(stalled, 'Transfer-Encoding: chunked\r\n')}\r\n1\r\n{\r\n`)],
      ['headers never finished', undefined, (c) => c.trickle(['GET /health/live HTTP/1.1\r\n', 'Host: t\r\n'], EVERY_MS)],
    ];
    const opened = late.map(([what, id, send]) => {
      const c = new RawConnection(h.svc.url);
      send(c);
      return { what, id, c };
    });
    // On OPS_PORT, whose routes read no body: headers that never end.
    const opsLate = new RawConnection(ops);
    opsLate.trickle(['GET /metrics HTTP/1.1\r\n', 'Host: t\r\n', 'X-A: 1\r\n'], EVERY_MS);
    // Many at once, split over both ways: the issue saw 1,000 held for good.
    const crowd = Array.from({ length: 200 }, (_, i) => {
      const c = new RawConnection(h.svc.url);
      c.write(`${tryHead(i % 2 ? '/orders' : '/orders?x=1')}Content-Length: 100\r\n\r\n{}`);
      return c;
    });

    // Meanwhile the service answers as usual: an idle keep-alive connection is kept, and a slow
    // body that arrives within the limit (its last piece at half of it) is served.
    const keptAlive = new RawConnection(h.svc.url);
    keptAlive.write(`${tryHead('/orders')}Content-Length: ${Buffer.byteLength(tryBody())}\r\n\r\n${tryBody()}`);
    const slowButInTime = new RawConnection(h.svc.url);
    const put = JSON.stringify({ name: 'slow', priceMinor: 100, currency: 'USD', onHand: 3 });
    const slowSku = `${sku}-SLOW`;
    slowButInTime.trickle([`${putHead(slowSku)}Content-Length: ${put.length}\r\n\r\n`, put.slice(0, 10), put.slice(10, 20), put.slice(20, 30), put.slice(30)], LIMIT_MS / 8);
    expect((await keptAlive.next(5000)).status).toBe(201);
    expect((await h.api.get('/health/live')).status).toBe(200);

    const results = await Promise.all(opened.map(async ({ what, id, c }) => ({ what, id, reply: await c.next(LIMIT_MS + 10_000), closed: await c.closesWithin(1000) })));
    for (const { what, id, reply, closed } of results) {
      expect([what, reply.status, closed]).toEqual([what, 408, true]);
      expectProblemAnswer(reply, 408, 'REQUEST_TIMEOUT', id);
      // Node looks for late requests once a second: 0-1 s past the limit, not up to twice it.
      expect([what, reply.at >= LIMIT_MS - 500 && reply.at <= LIMIT_MS + 3000]).toEqual([what, true]);
    }
    const opsReply = await opsLate.next(LIMIT_MS + 10_000);
    expectProblemAnswer(opsReply, 408, 'REQUEST_TIMEOUT');
    expect(opsReply.at).toBeLessThanOrEqual(LIMIT_MS + 3000);
    expect(await opsLate.closesWithin(1000)).toBe(true);
    const crowdReplies = await Promise.all(crowd.map(async (c) => ({ status: (await c.next(LIMIT_MS + 10_000)).status, closed: await c.closesWithin(2000) })));
    expect(crowdReplies.filter((r) => r.status !== 408 || !r.closed)).toEqual([]);

    const slow = await slowButInTime.next(1000); // answered at half the limit, already in
    expect([slow.status, slow.at < LIMIT_MS - 1000]).toEqual([200, true]);
    // The keep-alive connection, idle for the whole limit, still serves.
    keptAlive.write(`${tryHead('/orders')}Content-Length: ${Buffer.byteLength(tryBody())}\r\n\r\n${tryBody()}`);
    expect((await keptAlive.next(5000)).status).toBe(201);
    keptAlive.destroy();

    expect((await h.api.get(`/inventory/${stalled}`)).status).toBe(404);
    expect(await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).toEqual([{ n: ordersBefore[0].n + 2 }]);
  }, LIMIT_MS + 30_000);
});

describe('answers node:http would give bare, or not at all', () => {
  /** Sends one request on a fresh connection; the answer, and whether the server then hung up (it does so at once). */
  async function once(base: string, request: string): Promise<{ reply: RawReply; closed: boolean }> {
    const c = new RawConnection(base);
    c.write(request);
    try {
      const reply = await c.next(5000);
      return { reply, closed: await c.closesWithin(300) };
    } finally {
      c.destroy();
    }
  }
  const put = JSON.stringify({ priceMinor: 100, currency: 'USD', onHand: 1 });

  it.each([
    ['the fast path (POST /orders)', () => h.svc.url, () => `${tryHead('/orders', 'Expect: 200-ok\r\nX-Request-Id: exp-1\r\n')}Content-Length: ${tryBody().length}\r\n\r\n${tryBody()}`],
    ['Fastify (POST /orders?x=1)', () => h.svc.url, () => `${tryHead('/orders?x=1', 'Expect: 200-ok\r\nX-Request-Id: exp-1\r\n')}Content-Length: ${tryBody().length}\r\n\r\n${tryBody()}`],
    ['Fastify (PUT /admin/inventory)', () => h.svc.url, () => `${putHead(`${sku}-EXP`, 'Expect: 200-ok\r\nX-Request-Id: exp-1\r\n')}Content-Length: ${put.length}\r\n\r\n${put}`],
    ['OPS_PORT', () => ops, () => 'GET /health/live HTTP/1.1\r\nHost: t\r\nExpect: 200-ok\r\nX-Request-Id: exp-1\r\n\r\n'],
  ])('an Expect other than 100-continue, on %s: 400 VALIDATION_FAILED naming Expect, connection closed, nothing done', async (_where, base, request) => {
    const before = await fingerprint(h.db);
    const { reply, closed } = await once(base(), request());
    expectProblemAnswer(reply, 400, 'VALIDATION_FAILED', 'exp-1');
    expectValidation(answer(reply), /^Expect$/);
    expect(closed).toBe(true);
    expect(await fingerprint(h.db)).toEqual(before);
  });

  it('Expect: 100-continue keeps working, on the fast path and through Fastify', async () => {
    const body = tryBody();
    for (const target of ['/orders', '/orders?x=1']) {
      const { reply } = await once(h.svc.url, `${tryHead(target, 'Expect: 100-continue\r\n')}Content-Length: ${body.length}\r\n\r\n${body}`);
      expect([target, reply.interim, reply.status]).toEqual([target, [100], 201]);
    }
    const { reply } = await once(h.svc.url, `${putHead(`${sku}-CONT`, 'Expect: 100-continue\r\n')}Content-Length: ${put.length}\r\n\r\n${put}`);
    expect([reply.interim, reply.status]).toEqual([[100], 200]);
  });

  it.each([
    ['the fast path (POST /orders)', () => h.svc.url, () => `POST /orders HTTP/1.1\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\nX-Request-Id: nohost-1\r\nContent-Length: ${tryBody().length}\r\n\r\n${tryBody()}`],
    ['Fastify (PUT /admin/inventory, before authorization)', () => h.svc.url, () => `PUT /admin/inventory/${sku}-NOHOST HTTP/1.1\r\nContent-Type: application/json\r\nX-Request-Id: nohost-1\r\nContent-Length: ${put.length}\r\n\r\n${put}`],
    ['OPS_PORT', () => ops, () => 'GET /health/live HTTP/1.1\r\nX-Request-Id: nohost-1\r\n\r\n'],
  ])('an HTTP/1.1 request without Host, on %s: 400 VALIDATION_FAILED naming Host, connection closed, nothing done', async (_where, base, request) => {
    const before = await fingerprint(h.db);
    const { reply, closed } = await once(base(), request());
    expectProblemAnswer(reply, 400, 'VALIDATION_FAILED', 'nohost-1');
    expectValidation(answer(reply), /^Host$/);
    expect(closed).toBe(true);
    expect(await fingerprint(h.db)).toEqual(before);
  });

  it('HTTP/1.0 needs no Host', async () => {
    expect((await once(h.svc.url, 'GET /health/live HTTP/1.0\r\n\r\n')).reply.status).toBe(200);
    expect((await once(ops, 'GET /health/live HTTP/1.0\r\n\r\n')).reply.status).toBe(200);
  });

  it.each([
    ['PORT', () => h.svc.url],
    ['OPS_PORT', () => ops],
  ])('CONNECT on %s: 404 NOT_FOUND problem+json, then the connection is closed', async (_port, base) => {
    const { reply, closed } = await once(base(), 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: connect-1\r\n\r\n');
    expectProblemAnswer(reply, 404, 'NOT_FOUND', 'connect-1');
    expect(closed).toBe(true);
  });

  it('OPS_PORT answers anything but its four routes with problem+json and X-Request-Id', async () => {
    for (const request of ['GET /nope HTTP/1.1\r\nHost: t\r\n\r\n', 'DELETE /metrics HTTP/1.1\r\nHost: t\r\n\r\n', 'POST /health HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}']) {
      expectProblemAnswer((await once(ops, request)).reply, 404, 'NOT_FOUND');
    }
    const { reply, closed } = await once(ops, 'BREW / HTTP/1.1\r\nHost: t\r\n\r\n');
    expectProblemAnswer(reply, 400, 'VALIDATION_FAILED');
    expect(closed).toBe(true);
    const live = await once(ops, 'GET /health/live HTTP/1.1\r\nHost: t\r\nX-Request-Id: ops-1\r\n\r\n');
    expect([live.reply.status, live.reply.headers['x-request-id'], live.closed]).toEqual([200, 'ops-1', false]);
  });

  it('keep-alive holds for plain requests on either way in', async () => {
    const c = new RawConnection(h.svc.url);
    const body = tryBody();
    try {
      for (const target of ['/orders', '/orders?x=1', '/orders']) {
        c.write(`${tryHead(target)}Content-Length: ${body.length}\r\n\r\n${body}`);
        expect([target, (await c.next(5000)).status]).toEqual([target, 201]);
      }
      expect(await c.closesWithin(500)).toBe(false);
    } finally {
      c.destroy();
    }
  });
});
