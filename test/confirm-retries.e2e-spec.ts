import { createTestDatabase, TestDatabase } from './support/database.js';
import { client, Client, waitFor } from './support/http.js';
import { reserve, uniqueSku, waitForStatus, TERMINAL } from './support/orders.js';
import { deleteQueueKeys, HANG_ENV, queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';

/** Unknown outcomes: BullMQ retries with the same key, lookups after the last attempt, the breaker. */
let db: TestDatabase;
let sim: SimulatorHandle;
let svc: ServiceProcess | undefined;
let api: Client;
const prefix = queuePrefix();

async function restart(env: Record<string, string> = {}): Promise<void> {
  await svc?.stop();
  svc = await startService({ DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix, ...HANG_ENV, ...env });
  api = client(svc.url);
}

beforeAll(async () => {
  db = await createTestDatabase();
  sim = await startSimulator();
});

beforeEach(async () => {
  await sim.reset();
});

afterAll(async () => {
  await svc?.stop();
  await sim?.close();
  await db?.drop();
  await deleteQueueKeys(prefix);
});

afterEach(async () => {
  expect(await db.query(`SELECT sku FROM stock WHERE reserved < 0 OR reserved > on_hand`)).toEqual([]);
});

describe('retries with the same idempotency key', () => {
  beforeAll(() => restart({ CONFIRM_MAX_ATTEMPTS: '5' }));

  it('charge, then hang: CONFIRM_SUCCESS with exactly one charge', async () => {
    const s = uniqueSku('HANG');
    const order = await reserve(api, s, 2);
    await sim.setFaults({ hangMs: 3000 });
    await sim.script(['charge_then_hang']);
    const res = await api.post(`/orders/${order.id}/confirm`);
    expect(res.status).toBe(202);
    const done = await waitForStatus(api, order.id, TERMINAL);
    expect(done.status).toBe('CONFIRM_SUCCESS');
    expect(await sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 2000 });
    expect((await api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 8, reserved: 0 });
  });

  it('charge, then 5xx: the same', async () => {
    const s = uniqueSku('C5XX');
    const order = await reserve(api, s, 1);
    await sim.script(['charge_then_error']);
    expect((await api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
    const done = await waitForStatus(api, order.id, TERMINAL);
    expect(done.status).toBe('CONFIRM_SUCCESS');
    expect(await sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 1000 });
  });

  it('two 5xx, then success: CONFIRM_SUCCESS after at least 3 attempts, each on the timeline', async () => {
    const order = await reserve(api, uniqueSku('TWO5XX'), 1);
    await sim.script(['error', 'error', 'ok']);
    expect((await api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
    const done = await waitForStatus(api, order.id, TERMINAL);
    expect(done).toMatchObject({ status: 'CONFIRM_SUCCESS' });
    expect(done.confirmAttempts).toBeGreaterThanOrEqual(3);
    expect(await sim.chargesFor(order.id)).toMatchObject({ succeeded: 1 });
    const events = (await api.admin('GET', `/admin/orders/${order.id}/events`)).body.data;
    const charges = events.filter((e: any) => e.type === 'payment.charge');
    expect(charges.map((e: any) => e.data.outcome)).toEqual(['unknown', 'unknown', 'succeeded']);
    expect(charges.every((e: any) => typeof e.data.latencyMs === 'number')).toBe(true);
    expect(events.filter((e: any) => e.type === 'confirm.retry_scheduled')).toHaveLength(2);
    const keys = await db.query(`SELECT DISTINCT payment_key FROM orders WHERE id = $1`, [order.id]);
    expect(keys).toHaveLength(1);
  });
});

describe('retries exhausted', () => {
  beforeAll(() => restart({ CONFIRM_MAX_ATTEMPTS: '3', RESERVATION_TTL_MS: '4000', BREAKER_VOLUME_THRESHOLD: '1000' }));

  it('every attempt unknown and no charge at the gateway: PAY_FAILED, stock released', async () => {
    const s = uniqueSku('EXH');
    const order = await reserve(api, s, 3);
    await sim.setFaults({ errorRate: 1 });
    expect((await api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
    const done = await waitForStatus(api, order.id, TERMINAL);
    expect(done).toMatchObject({ status: 'PAY_FAILED', confirmAttempts: 3 });
    expect((await api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 10, reserved: 0 });
    expect(await sim.chargesFor(order.id)).toMatchObject({ succeeded: 0 });
    expect((await api.post(`/orders/${order.id}/confirm`)).status).toBe(402);
  });

  it('the gateway down for good, lookups too: the order ends CANCELED at its TTL, stock released, no charge', async () => {
    const s = uniqueSku('DOWN');
    const order = await reserve(api, s, 2);
    await sim.setFaults({ down: true });
    expect((await api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
    const done = await waitForStatus(api, order.id, TERMINAL);
    expect(['PAY_FAILED', 'CANCELED']).toContain(done.status);
    expect((await api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 10, reserved: 0 });
    expect(await sim.chargesFor(order.id)).toMatchObject({ succeeded: 0, netCapturedMinor: 0 });
  });
});

describe('circuit breaker', () => {
  // A database and queues of its own: the earlier tests' orders keep the gateway busy (lookups,
  // refund rounds), and a lookup that succeeds while the breaker is half-open closes it, letting
  // every charge waiting then through at once — calls the bound below does not count.
  beforeAll(async () => {
    await svc?.stop();
    svc = undefined;
    await db.drop();
    await deleteQueueKeys(prefix);
    db = await createTestDatabase();
    await restart({
      CONFIRM_MAX_ATTEMPTS: '8',
      CONFIRM_RETRY_BASE_MS: '200',
      BREAKER_VOLUME_THRESHOLD: '3',
      BREAKER_ERROR_THRESHOLD_PERCENT: '50',
      BREAKER_RESET_TIMEOUT_MS: '1000',
      RESERVATION_TTL_MS: '60000',
    });
  });

  it('opens while the gateway fails, bounds the calls, and deferred orders complete after it recovers', async () => {
    const orders = [];
    for (let i = 0; i < 10; i++) orders.push(await reserve(api, uniqueSku(`BRK${i}`), 1));
    const ours = new Set(orders.map((o) => o.id));
    /** Charge requests the gateway received for these orders (anything else reaching it is not this breaker's doing). */
    const charges = async () => (await sim.ledger()).chargeAttempts.filter((a) => ours.has(a.reference)).length;
    /**
     * Half-opens the service logged up to `until` (epoch ms). Its log is written in the background
     * (flushed every 100 ms), so a line is read by its own timestamp once the log has caught up,
     * not by whether it has reached this process yet.
     */
    const halfOpens = (until = Infinity) =>
      svc!.logs.filter((l) => l.includes('circuit breaker is now half_open') && (JSON.parse(l) as { time: number }).time <= until).length;
    await sim.setFaults({ errorRate: 1 });
    const halfOpensBefore = halfOpens();
    const started = Date.now();
    await Promise.all(orders.map((o) => api.post(`/orders/${o.id}/confirm`)));
    await waitFor('the breaker to open', async () => /tcc_payment_circuit_state 2/.test((await api.get('/metrics')).body));
    await new Promise((r) => setTimeout(r, 3000));
    // A charge counted has its half-open logged before it: every half-open up to the moment the
    // charges were read counts, once the log holding it has been flushed.
    const during = await charges();
    const readAt = Date.now();
    await new Promise((r) => setTimeout(r, 1000));
    const probes = halfOpens(readAt) - halfOpensBefore;
    const elapsedMs = readAt - started;
    // 10 orders retrying every ~200-400 ms for 3 s would make well over 60 calls without a breaker.
    // With it: each order's first call, then one call per half-open (each comes a reset period,
    // 1 s, after the breaker opened), exactly.
    const timeline = async () =>
      JSON.stringify({ during, probes, elapsedMs, events: await db.query(`SELECT order_id, type, data->>'outcome' AS outcome, data->>'source' AS source, at FROM order_events WHERE type IN ('payment.charge', 'payment.breaker_rejected') ORDER BY at`) });
    if (during > 10 + probes || probes > Math.floor(elapsedMs / 1000)) throw new Error(`the breaker let too many calls through: ${await timeline()}`);
    expect(during).toBeGreaterThanOrEqual(3); // the volume it needs to open
    const metrics = (await api.get('/metrics')).body as string;
    expect(Number(/tcc_confirm_attempts_total\{outcome="circuit_open"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(0);

    await sim.setFaults({ errorRate: 0 });
    for (const o of orders) {
      const done = await waitForStatus(api, o.id, TERMINAL, 30_000);
      expect(done.status).toBe('CONFIRM_SUCCESS');
      expect(await sim.chargesFor(o.id)).toMatchObject({ succeeded: 1 });
    }
    await waitFor('the breaker to close', async () => /tcc_payment_circuit_state 0/.test((await api.get('/metrics')).body));
    const rejected = (await db.query(`SELECT count(*)::int AS n FROM order_events WHERE type = 'payment.breaker_rejected'`))[0].n;
    expect(rejected).toBeGreaterThan(0);
  });
});
