import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { connect } from 'node:net';
import { client, Client, waitFor } from './support/http.js';
import { reserve, uniqueSku, waitForStatus, TERMINAL } from './support/orders.js';
import { RawConnection } from './support/raw-http.js';
import { RedisServer, startRedisServer } from './support/redis-server.js';
import { queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';

/**
 * Postgres is the truth, Redis only schedules: lost jobs, duplicate jobs, a worker killed
 * mid-retry and an API that could not enqueue at all must all end in a terminal state, with at
 * most one charge per order and no net charge on released ones. The file has a Redis of its own
 * (it wipes it), so the files running beside it keep their queues.
 */
let db: TestDatabase;
let sim: SimulatorHandle;
let redis: RedisServer;
const prefix = queuePrefix();
const running: ServiceProcess[] = [];

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const svc = await startService({ DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix, REDIS_URL: redis.url, ...env });
  running.push(svc);
  return svc;
}

/** Every order terminal, each with at most one charge; paid ones exactly one, released ones none net. */
async function expectSettled(api: Client, ids: string[]): Promise<Record<string, number>> {
  const tally: Record<string, number> = {};
  for (const id of ids) {
    const order = await waitForStatus(api, id, TERMINAL, 40_000);
    tally[order.status] = (tally[order.status] ?? 0) + 1;
    const charges = await sim.chargesFor(id);
    expect(charges.succeeded).toBeLessThanOrEqual(1);
    if (order.status === 'CONFIRM_SUCCESS') {
      expect(charges).toMatchObject({ succeeded: 1, netCapturedMinor: order.amountMinor });
    } else {
      await waitForNoNetCharge(id);
    }
  }
  const [{ holding }] = await db.query<{ holding: number }>(`SELECT coalesce(sum(reserved), 0)::int AS holding FROM stock`);
  expect(holding).toBe(0);
  return tally;
}

async function waitForNoNetCharge(id: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await sim.chargesFor(id)).netCapturedMinor > 0) {
    if (Date.now() > deadline) throw new Error(`order ${id} is released but still charged`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  [db, sim, redis] = await Promise.all([createTestDatabase(), startSimulator(), startRedisServer()]);
});

beforeEach(() => sim.reset());

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  expect(await db.query(`SELECT sku FROM stock WHERE reserved < 0 OR reserved > on_hand`)).toEqual([]);
});

afterAll(async () => {
  await sim?.close();
  await db?.drop();
  await redis?.stop();
});

it('Redis FLUSHALL with pending orders: every order still reaches a terminal state', async () => {
  // The TTL leaves the retries (after the wipe, the sweeper's: a second's grace past their time)
  // room to charge before it on a busy machine; the idle orders still expire.
  const svc = await start({ RESERVATION_TTL_MS: '10000', CONFIRM_RETRY_BASE_MS: '300', CONFIRM_MAX_ATTEMPTS: '10', BREAKER_VOLUME_THRESHOLD: '1000' });
  const api = client(svc.url);
  const idle = [];
  for (let i = 0; i < 3; i++) idle.push(await reserve(api, uniqueSku('IDLE'), 1));
  const pending = [];
  for (let i = 0; i < 3; i++) pending.push(await reserve(api, uniqueSku('PEND'), 1));
  await sim.setFaults({ errorRate: 1 });
  for (const o of pending) expect((await api.post(`/orders/${o.id}/confirm`)).status).toBe(202);

  const wipe = new Redis(redis.url);
  await wipe.flushall();
  wipe.disconnect();
  await sim.setFaults({ errorRate: 0 });

  const tally = await expectSettled(api, [...idle, ...pending].map((o) => o.id));
  expect(tally).toEqual({ CANCELED: 3, CONFIRM_SUCCESS: 3 });
});

it('an API that cannot reach Redis (commit, then no enqueue): the worker sweeper finishes its orders', async () => {
  const env = { RESERVATION_TTL_MS: '8000', CONFIRM_RETRY_BASE_MS: '200', BREAKER_VOLUME_THRESHOLD: '1000' };
  const apiOnly = await start({ ...env, ROLE: 'api', REDIS_URL: 'redis://127.0.0.1:1' });
  await start({ ...env, ROLE: 'worker' });
  const api = client(apiOnly.url);
  const idle = await reserve(api, uniqueSku('NOQ'), 2);
  const pending = await reserve(api, uniqueSku('NOQP'), 1);
  await sim.script(['error']);
  expect((await api.post(`/orders/${pending.id}/confirm`)).status).toBe(202);
  expect((await api.get('/health')).status).toBe(503);
  const tally = await expectSettled(api, [idle.id, pending.id]);
  expect(tally).toEqual({ CANCELED: 1, CONFIRM_SUCCESS: 1 });
});

it('duplicate job deliveries for one pending order charge once', async () => {
  const svc = await start({ CONFIRM_RETRY_BASE_MS: '400', BREAKER_VOLUME_THRESHOLD: '1000' });
  const api = client(svc.url);
  const order = await reserve(api, uniqueSku('DUP'), 1);
  await sim.setFaults({ latencyMs: 100 });
  await sim.script(['error']);
  expect((await api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
  const queue = new Queue('confirm-retry', { connection: { host: '127.0.0.1', port: redis.port }, prefix });
  try {
    // The same step delivered 20 times at once, under other job ids (a redelivery after a stall).
    await Promise.all(Array.from({ length: 20 }, (_, i) => queue.add('confirm-retry', { orderId: order.id }, { jobId: `dup-${i}`, delay: 450 })));
    const done = await waitForStatus(api, order.id, TERMINAL);
    expect(done.status).toBe('CONFIRM_SUCCESS');
    expect(done.confirmAttempts).toBe(2);
  } finally {
    await queue.close();
  }
  expect(await sim.chargesFor(order.id)).toMatchObject({ succeeded: 1 });
  expect((await sim.ledger()).chargeRequests).toBe(2);
});

it('a worker killed with SIGKILL mid-retry and restarted: all terminal, at most one charge each', async () => {
  const env = { CONFIRM_RETRY_BASE_MS: '150', CONFIRM_MAX_ATTEMPTS: '6', PAYMENT_TIMEOUT_MS: '400', RESERVATION_TTL_MS: '30000', BREAKER_VOLUME_THRESHOLD: '1000' };
  const apiProc = await start({ ...env, ROLE: 'api' });
  let worker = await start({ ...env, ROLE: 'worker' });
  const api = client(apiProc.url);
  const orders: { id: string }[] = [];
  for (let i = 0; i < 12; i++) orders.push(await reserve(api, uniqueSku(`KILL${i}`), 1));
  // Every first attempt is unknown; retries then land in a slow gateway, some charging then hanging.
  await sim.setFaults({ errorRate: 1 });
  await Promise.all(orders.map((o) => api.post(`/orders/${o.id}/confirm`)));
  await sim.setFaults({ errorRate: 0, latencyMs: 250, hangMs: 2000 });
  await sim.script(['charge_then_hang', 'charge_then_hang', 'charge_then_error', 'charge_then_hang']);
  // Killed mid-retry: once a retry's charge has landed at the gateway while its answer hangs.
  const charged = async () => (await Promise.all(orders.map(async (o) => ({ id: o.id, ...(await sim.chargesFor(o.id)) })))).filter((c) => c.succeeded > 0);
  await waitFor('a retry to charge, its answer hanging', async () => (await charged()).length > 0);
  await worker.kill();
  const [{ open }] = await db.query<{ open: number }>(`SELECT count(*)::int AS open FROM orders WHERE id = ANY ($1::uuid[]) AND status <> ALL ($2::text[])`, [
    (await charged()).map((c) => c.id),
    TERMINAL,
  ]);
  expect(open).toBeGreaterThan(0); // a charged order the dead worker had not finished
  await new Promise((r) => setTimeout(r, 500));
  worker = await start({ ...env, ROLE: 'worker' });
  await sim.setFaults({ latencyMs: 0 });
  const tally = await expectSettled(api, orders.map((o) => o.id));
  expect(Object.values(tally).reduce((a, b) => a + b, 0)).toBe(12);
});

it('the API process killed in the middle of a client Confirm: the worker resumes it with the same key', async () => {
  const env = { PAYMENT_TIMEOUT_MS: '1500', RESERVATION_TTL_MS: '60000', BREAKER_VOLUME_THRESHOLD: '1000' };
  const apiProc = await start({ ...env, ROLE: 'api' });
  await start({ ...env, ROLE: 'worker' });
  let api = client(apiProc.url);
  const order = await reserve(api, uniqueSku('MIDCALL'), 2);
  await sim.setFaults({ hangMs: 1000 });
  await sim.script(['charge_then_hang']);
  const inFlight = api.post(`/orders/${order.id}/confirm`).catch(() => undefined);
  await waitFor('the charge to reach the gateway', async () => (await sim.chargesFor(order.id)).succeeded === 1);
  await apiProc.kill();
  await inFlight;
  const [row] = await db.query<{ status: string; leased: boolean }>(
    `SELECT status, next_action_at > now() AS leased FROM orders WHERE id = $1`,
    [order.id],
  );
  expect(row).toEqual({ status: 'TRY_SUCCESS', leased: true });
  api = client((await start({ ...env, ROLE: 'api' })).url);
  const done = await waitForStatus(api, order.id, TERMINAL, 30_000);
  expect(done.status).toBe('CONFIRM_SUCCESS');
  expect(await sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 2000 });
  const events = await db.query<{ type: string; source: string }>(
    `SELECT type, data->>'source' AS source FROM order_events WHERE order_id = $1 AND type = 'payment.charge'`,
    [order.id],
  );
  expect(events).toEqual([{ type: 'payment.charge', source: 'resume' }]);
});

it('SIGTERM finishes in-flight work: a Confirm request and a retry job mid-call complete before the process exits', async () => {
  const env = { PAYMENT_TIMEOUT_MS: '3000', CONFIRM_RETRY_BASE_MS: '100', BREAKER_VOLUME_THRESHOLD: '1000' };
  const apiProc = await start({ ...env, ROLE: 'api' });
  const worker = await start({ ...env, ROLE: 'worker' });
  const api = client(apiProc.url);
  const viaHttp = await reserve(api, uniqueSku('TERMH'), 1);
  const viaJob = await reserve(api, uniqueSku('TERMJ'), 1);

  // A retry job that will be mid-call when the worker is told to stop.
  await sim.script(['error']);
  expect((await api.post(`/orders/${viaJob.id}/confirm`)).status).toBe(202);
  await sim.setFaults({ latencyMs: 1200 });
  await waitFor('the retry to reach the gateway', async () => (await sim.ledger()).chargeRequests >= 2, 10_000, 20);
  const workerExit = worker.stop();

  // A client Confirm mid-call when the API is told to stop.
  const inFlight = api.post(`/orders/${viaHttp.id}/confirm`);
  await waitFor('the charge to reach the gateway', async () => (await sim.chargesFor(viaHttp.id)).succeeded === 1, 10_000, 20);
  const apiExit = apiProc.stop();
  const answer = await inFlight;
  expect(answer.status).toBe(200);
  expect(answer.body.status).toBe('CONFIRM_SUCCESS');
  await Promise.all([apiExit, workerExit]);

  const rows = await db.query<{ id: string; status: string }>(`SELECT id, status FROM orders WHERE id = ANY($1::uuid[]) ORDER BY id`, [
    [viaHttp.id, viaJob.id],
  ]);
  expect(rows.map((r) => r.status)).toEqual(['CONFIRM_SUCCESS', 'CONFIRM_SUCCESS']);
});

/**
 * An API process asked to stop (SIGTERM) while a Confirm is at the gateway (answering after
 * `latencyMs`) on a raw keep-alive connection: `then` goes on with that connection and the
 * process's URL, and the process must then exit.
 */
async function stoppedWithConfirmInFlight(skuPrefix: string, latencyMs: number, then: (c: RawConnection, url: string, orderId: string) => Promise<void>): Promise<void> {
  const apiProc = await start({ ROLE: 'api', PAYMENT_TIMEOUT_MS: '6000', BREAKER_VOLUME_THRESHOLD: '1000' });
  const order = await reserve(client(apiProc.url), uniqueSku(skuPrefix), 1);
  await sim.setFaults({ latencyMs });
  const c = new RawConnection(apiProc.url);
  try {
    const charges = (await sim.ledger()).chargeRequests;
    c.write(`POST /orders/${order.id}/confirm HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
    await waitFor('the charge to reach the gateway', async () => (await sim.ledger()).chargeRequests > charges, 10_000, 20);
    const exit = apiProc.stop();
    await then(c, apiProc.url, order.id);
    await exit;
  } finally {
    c.destroy();
    await sim.setFaults({ latencyMs: 0 });
  }
}

it('a keep-alive connection busy when SIGTERM comes is ended by the server once its answer is written: the process does not wait for the client to let go', async () => {
  await stoppedWithConfirmInFlight('TERMKA', 1500, async (c) => {
    const answer = await c.next(10_000);
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).not.toBe('close'); // a keep-alive answer: the server ends it, not the client
    // Before, such a connection stayed open for the keep-alive timeout (75 s), and the process with it.
    expect(await c.closesWithin(5000)).toBe(true);
  });
});

it('a request that still arrives while the process shuts down (on a connection busy with another) is answered 503 SERVICE_UNAVAILABLE problem+json with X-Request-Id', async () => {
  await stoppedWithConfirmInFlight('TERM503', 3000, async (c, url, orderId) => {
    // Once it no longer listens, its close has begun; the Confirm is still at the gateway.
    const refused = () =>
      new Promise<boolean>((resolve) => {
        const probe = connect(Number(new URL(url).port), '127.0.0.1');
        probe.on('connect', () => resolve(false)).on('error', () => resolve(true));
        probe.on('connect', () => probe.destroy());
      });
    await waitFor('the server to stop taking connections', refused, 5000, 20);
    c.write(`GET /orders/${orderId} HTTP/1.1\r\nHost: t\r\nX-Request-Id: during-close\r\n\r\n`);
    expect((await c.next(10_000)).status).toBe(200);
    const late = await c.next(5000);
    expect({ status: late.status, type: late.headers['content-type'], id: late.headers['x-request-id'], code: late.body?.code }).toEqual({
      status: 503,
      type: 'application/problem+json; charset=utf-8',
      id: 'during-close',
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(await c.closesWithin(1000)).toBe(true);
  });
});
