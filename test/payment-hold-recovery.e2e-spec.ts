import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { moneyBroken, reserveHeld, tryHeld } from './support/holds.js';
import { client, Client, waitFor } from './support/http.js';
import { startPgProxy } from './support/pg-proxy.js';
import { TERMINAL, uniqueSku, waitForStatus } from './support/orders.js';
import { RedisServer, startRedisServer } from './support/redis-server.js';
import { queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';

/**
 * Payment held at Try, crash-safe: a process killed between the gateway's answer and the write (at
 * the authorization, the capture, the void), Redis wiped, jobs delivered twice, two processes
 * driving the same orders — every order settles from what Postgres holds, and the money invariant
 * holds at the simulator for each. The file has a Redis of its own (it wipes it), so the files
 * running beside it keep their queues.
 */
let db: TestDatabase;
let sim: SimulatorHandle;
let redis: RedisServer;
const prefix = queuePrefix();
const running: ServiceProcess[] = [];
// A step's lease is 2 × PAYMENT_TIMEOUT_MS + STEP_LEASE_MARGIN_MS: the kills below wait it out.
const ENV = { BREAKER_VOLUME_THRESHOLD: '1000', RESERVATION_TTL_MS: '60000', CONFIRM_MAX_ATTEMPTS: '4', STEP_LEASE_MARGIN_MS: '1000' };

async function start(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const svc = await startService({ DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix, REDIS_URL: redis.url, ...ENV, ...env });
  running.push(svc);
  return svc;
}

/** Every order terminal and its payment settled, the money invariant holding for each; nothing reserved of their SKUs. */
async function expectSettled(api: Client, ids: string[]): Promise<Record<string, number>> {
  const tally: Record<string, number> = {};
  for (const id of ids) {
    const order = await waitForStatus(api, id, TERMINAL, 40_000);
    tally[order.status] = (tally[order.status] ?? 0) + 1;
    await waitFor(`the money of ${id} to settle`, async () => (await moneyBroken(sim, order)).length === 0, 30_000, 200);
  }
  // Nothing reserved any more of these orders' SKUs (other tests' orders may still hold others).
  const [{ holding }] = await db.query<{ holding: number }>(
    `SELECT coalesce(sum(reserved), 0)::int AS holding FROM stock
      WHERE sku IN (SELECT line->>'sku' FROM orders o, jsonb_array_elements(o.items) AS line WHERE o.id = ANY ($1::uuid[]))`,
    [ids],
  );
  expect(holding).toBe(0);
  return tally;
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

it('killed between the authorization and its write: the order is found in Postgres after its lease and authorized by the same key; the Try sent again answers it', async () => {
  const svc = await start({ PAYMENT_TIMEOUT_MS: '2000' });
  let api = client(svc.url);
  const s = uniqueSku('KAUTH');
  await api.putSku(s, 5);
  await sim.setFaults({ hangMs: 10_000, script: ['authorize_then_hang'] });
  const key = randomUUID();
  const inFlight = tryHeld(api, s, 1, 'tok_ok', key).catch(() => undefined);
  await waitFor('the authorization to be made', async () => (await sim.ledger()).payments.length === 1, 5000, 20);
  await svc.kill();
  await inFlight;
  const [row] = await db.query<{ id: string; payment_status: string }>(`SELECT id, payment_status FROM orders WHERE idempotency_key = $1`, [key]);
  expect(row.payment_status).toBe('authorizing');
  api = client((await start({ PAYMENT_TIMEOUT_MS: '2000' })).url);
  await waitFor('the authorization to settle', async () => (await api.get(`/orders/${row.id}`)).body.payment.status === 'authorized', 30_000);
  const again = await tryHeld(api, s, 1, 'tok_ok', key);
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ id: row.id, status: 'TRY_SUCCESS', payment: { status: 'authorized' } });
  expect(await sim.holdsFor(row.id)).toEqual({ authorizations: 1, open: 1, captures: 0, netCapturedMinor: 0 });
  const confirmed = await api.post(`/orders/${row.id}/confirm`);
  expect(confirmed.status).toBe(200);
  expect(await moneyBroken(sim, confirmed.body)).toEqual([]);
}, 90_000);

it('killed between the capture and its write: resumed with the same capture key, one capture', async () => {
  const svc = await start({ PAYMENT_TIMEOUT_MS: '2000' });
  const order = await reserveHeld(client(svc.url), uniqueSku('KCAP'), 2);
  await sim.setFaults({ hangMs: 10_000 });
  await sim.script(['capture_then_hang'], 'captureScript');
  const inFlight = client(svc.url).post(`/orders/${order.id}/confirm`).catch(() => undefined);
  await waitFor('the capture to be made', async () => (await sim.ledger()).captures.length === 1, 5000, 20);
  await svc.kill();
  await inFlight;
  const api = client((await start({ PAYMENT_TIMEOUT_MS: '2000' })).url);
  const done = await waitForStatus(api, order.id, TERMINAL, 30_000);
  expect(done).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured', capturedMinor: 2000 } });
  expect(await moneyBroken(sim, done)).toEqual([]);
  expect((await sim.ledger()).captureRequests).toBe(2);
}, 90_000);

it('killed between the void and its write: the next round finds the hold voided', async () => {
  const svc = await start({ PAYMENT_TIMEOUT_MS: '2000' });
  const order = await reserveHeld(client(svc.url), uniqueSku('KVOID'), 1);
  await sim.setFaults({ hangMs: 10_000 });
  await sim.script(['void_then_hang'], 'voidScript');
  await client(svc.url).post(`/orders/${order.id}/cancel`);
  await waitFor('the void to be made', async () => (await sim.ledger()).voids.length === 1, 5000, 20);
  await svc.kill();
  const api = client((await start({ PAYMENT_TIMEOUT_MS: '2000' })).url);
  const done = await waitFor('the payment to be voided', async () => {
    const o = (await api.get(`/orders/${order.id}`)).body;
    return o.payment.status === 'voided' && o;
  }, 40_000);
  expect(await moneyBroken(sim, done)).toEqual([]);
}, 90_000);

it('the database gone between the authorization and its write: the Try answers 201 authorizing (its stock is committed), settled once the database is back', async () => {
  const proxy = await startPgProxy(db.url);
  try {
    const svc = await start({ DATABASE_URL: proxy.url, DATABASE_DIRECT_URL: db.url, PAYMENT_TIMEOUT_MS: '2000', DB_POOL_SIZE: '3' });
    const api = client(svc.url);
    const s = uniqueSku('DBGONE');
    await api.putSku(s, 5);
    await sim.setFaults({ hangMs: 600, script: ['slow_ok'] });
    const key = randomUUID();
    const inFlight = tryHeld(api, s, 1, 'tok_ok', key);
    await waitFor('the authorization to reach the gateway', async () => (await sim.ledger()).authorizeAttempts.length === 1, 5000, 20);
    proxy.refuse('57P01', 'terminating connection due to administrator command');
    const res = await inFlight;
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'TRY_SUCCESS', payment: { status: 'authorizing' } });
    proxy.pass();
    await waitFor('the authorization to settle', async () => (await api.get(`/orders/${res.body.id}`)).body?.payment?.status === 'authorized', 40_000);
    expect(await sim.holdsFor(res.body.id)).toEqual({ authorizations: 1, open: 1, captures: 0, netCapturedMinor: 0 });
    expect((await api.post(`/orders/${res.body.id}/cancel`)).status).toBe(200);
    expect(await expectSettled(api, [res.body.id])).toEqual({ CANCELED: 1 });
  } finally {
    await Promise.all(running.splice(0).map((p) => p.stop()));
    await proxy.close();
  }
}, 90_000);

it('Redis wiped while authorizations are unsettled: the sweeper settles every one from Postgres', async () => {
  const svc = await start({ CONFIRM_RETRY_BASE_MS: '500' });
  const api = client(svc.url);
  const s = uniqueSku('FLUSH');
  await api.putSku(s, 20);
  await sim.script(Array.from({ length: 6 }, () => 'error' as const));
  const orders = await Promise.all(Array.from({ length: 6 }, () => tryHeld(api, s, 1)));
  expect(orders.every((o) => o.body.payment.status === 'authorizing')).toBe(true);
  const wipe = new Redis(redis.url);
  await wipe.flushall();
  wipe.disconnect();
  for (const o of orders) await waitFor('authorized', async () => (await api.get(`/orders/${o.body.id}`)).body.payment.status === 'authorized', 30_000);
  await Promise.all(orders.map((o) => api.post(`/orders/${o.body.id}/cancel`)));
  expect(await expectSettled(api, orders.map((o) => o.body.id))).toEqual({ CANCELED: 6 });
}, 90_000);

it('a step delivered 20 times at once authorizes once more, no more', async () => {
  const svc = await start({ CONFIRM_RETRY_BASE_MS: '400' });
  const api = client(svc.url);
  const s = uniqueSku('DUPJOB');
  await api.putSku(s, 5);
  await sim.setFaults({ latencyMs: 100, script: ['error'] });
  const order = (await tryHeld(api, s, 1)).body;
  const queue = new Queue('confirm-retry', { connection: { host: '127.0.0.1', port: redis.port }, prefix });
  try {
    await Promise.all(Array.from({ length: 20 }, (_, i) => queue.add('confirm-retry', { bucket: Date.now() + 450 }, { jobId: `dup-auth-${i}`, delay: 450 })));
    await waitFor('authorized', async () => (await api.get(`/orders/${order.id}`)).body.payment.status === 'authorized');
  } finally {
    await queue.close();
  }
  expect((await sim.ledger()).authorizeAttempts).toHaveLength(2);
});

it('two service processes driving held orders and classic ones on a flaky gateway: each settles once, the money invariant for every one', async () => {
  const env = { CONFIRM_RETRY_BASE_MS: '150', CONFIRM_MAX_ATTEMPTS: '6', PAYMENT_TIMEOUT_MS: '400' };
  const a = client((await start(env)).url);
  const b = client((await start(env)).url);
  const s = uniqueSku('TWO');
  await a.putSku(s, 100);
  await sim.setFaults({ errorRate: 0.2, rateLimitRate: 0.1, latencyMs: 20 });
  const held: string[] = [];
  const classic: string[] = [];
  for (let i = 0; i < 16; i++) {
    const api = i % 2 ? a : b;
    const res = i % 4 === 3 ? await api.order(randomUUID(), { customerId: 'c', items: [{ sku: s, quantity: 1 }] }) : await tryHeld(api, s, 1);
    if (res.status === 201) (res.body.payment ? held : classic).push(res.body.id);
  }
  expect(held.length).toBeGreaterThan(8);
  // Every order confirmed on both processes at once, or canceled on one while confirmed on the other.
  await Promise.all(
    [...held, ...classic].map(async (id, i) => {
      if (i % 3 === 0) await Promise.all([a.post(`/orders/${id}/cancel`), b.post(`/orders/${id}/confirm`)]);
      else await Promise.all([a.post(`/orders/${id}/confirm`), b.post(`/orders/${id}/confirm`)]);
    }),
  );
  await sim.setFaults({ errorRate: 0, rateLimitRate: 0, latencyMs: 0 });
  for (const id of classic) {
    const o = await waitForStatus(a, id, TERMINAL, 40_000);
    const charges = await sim.chargesFor(id);
    expect(charges.succeeded).toBeLessThanOrEqual(1);
    if (o.status === 'CONFIRM_SUCCESS') expect(charges.netCapturedMinor).toBe(1000);
    else await waitFor(`no net charge on ${id}`, async () => (await sim.chargesFor(id)).netCapturedMinor === 0, 30_000, 200);
  }
  const tally = await expectSettled(a, held);
  expect(Object.values(tally).reduce((x, y) => x + y, 0)).toBe(held.length);
  expect(tally.CONFIRM_SUCCESS ?? 0).toBeGreaterThan(0);
}, 120_000);
