import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { client, Client, waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { startReceiver } from './support/receiver.js';
import { deleteQueueKeys, queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';
import { stockDrift } from './support/stock.js';

/**
 * One order's trouble never fails another order of its batch, and a race never gets a stale
 * answer, with two service processes on one database:
 * - the same Idempotency-Keys sent at once to both, beside orders with keys of their own;
 * - webhook endpoints deleted and created again while Trys and Cancels run;
 * - Confirms racing Cancels and operators' force-confirms;
 * - a SKU row another transaction holds locked.
 */
let db: TestDatabase;
let sim: SimulatorHandle;
const prefix = queuePrefix();
const procs: ServiceProcess[] = [];
let a: Client;
let b: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  sim = await startSimulator();
  const env = { DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix, RESERVATION_TTL_MS: '600000', IDEMPOTENCY_WAIT_MS: '3000' };
  procs.push(await startService({ ...env, ROLE: 'all' }));
  procs.push(await startService({ ...env, ROLE: 'api' }));
  a = client(procs[0].url);
  b = client(procs[1].url);
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await sim?.close();
  await db?.drop();
  await deleteQueueKeys(prefix);
});

afterEach(async () => {
  expect(await stockDrift(db)).toEqual([]);
});

const fails = (statuses: number[]) => statuses.filter((s) => s >= 500);

it('the same Idempotency-Keys sent at once to two processes, beside orders with keys of their own, for 20 s: one order per key, no 5xx, every own-key order 201', async () => {
  const plenty = uniqueSku('IDEM');
  const scarce = uniqueSku('LAST');
  expect((await a.putSku(plenty, 1_000_000)).status).toBe(200);
  expect((await a.putSku(scarce, 40)).status).toBe(200);
  const dupAnswers = new Map<string, { status: number; code?: string; id?: string }[]>();
  const own: number[] = [];
  const deadline = Date.now() + 20_000;
  let rounds = 0;
  while (Date.now() < deadline) {
    rounds += 1;
    const keys = Array.from({ length: 6 }, () => randomUUID());
    const sends: Promise<unknown>[] = [];
    keys.forEach((key, i) => {
      // Half the keys race for the last units of a scarce SKU: a replay must answer the order its
      // first request made, never INSUFFICIENT_STOCK because that order took the last unit.
      const body = { customerId: 'c-dup', items: [{ sku: i % 2 ? scarce : plenty, quantity: 1 }] };
      dupAnswers.set(key, []);
      for (const api of [a, b, a, b]) {
        sends.push(api.order(key, body).then((r) => dupAnswers.get(key)!.push({ status: r.status, code: r.body?.code, id: r.body?.id })));
      }
    });
    for (let i = 0; i < 6; i++) {
      const api = i % 2 ? a : b;
      sends.push(api.order(randomUUID(), { customerId: 'c-own', items: [{ sku: plenty, quantity: 1 }] }).then((r) => own.push(r.status)));
    }
    await Promise.all(sends);
  }
  const all = [...dupAnswers.values()].flat();
  expect(fails(all.map((x) => x.status))).toEqual([]);
  expect(own.filter((s) => s !== 201)).toEqual([]);
  const orders = await db.query<{ idempotency_key: string; id: string }>(`SELECT idempotency_key, id FROM orders WHERE customer_id = 'c-dup'`);
  const byKey = new Map(orders.map((o) => [o.idempotency_key, o.id]));
  expect(orders.length).toBe(byKey.size); // never two orders for one key (the unique index holds anyway)
  for (const [key, answers] of dupAnswers) {
    const id = byKey.get(key);
    for (const x of answers) {
      if (id) {
        // The key's one order, or "still running": never a refusal of an order that exists.
        expect({ key, answer: x.status === 409 ? x.code : x.id }).toEqual({ key, answer: x.status === 409 ? 'IDEMPOTENCY_IN_PROGRESS' : id });
      } else {
        expect({ key, code: x.code }).toEqual({ key, code: expect.stringMatching(/^(INSUFFICIENT_STOCK|IDEMPOTENCY_IN_PROGRESS)$/) });
      }
    }
  }
  expect(rounds).toBeGreaterThan(10);
  // The scarce SKU sold out on the way: the race for its last units did happen.
  expect((await a.get(`/inventory/${scarce}`)).body.available).toBe(0);
}, 90_000);

it('webhook endpoints deleted and created again while Trys and Cancels run: no 5xx, and every event reaches an endpoint that stayed', async () => {
  const s = uniqueSku('HOOK');
  expect((await a.putSku(s, 1_000_000)).status).toBe(200);
  const kept = await startReceiver();
  const churn = await startReceiver();
  try {
    const events = ['order.reserved', 'order.canceled'];
    expect((await a.admin('PUT', '/admin/webhooks/kept', { url: kept.url, events, secret: kept.secret })).status).toBe(200);
    let stop = false;
    const churning = (async () => {
      let n = 0;
      while (!stop) {
        n += 1;
        const name = `churn-${n % 3}`;
        await b.admin('PUT', `/admin/webhooks/${name}`, { url: churn.url, events, secret: churn.secret });
        await a.admin('DELETE', `/admin/webhooks/${name}`);
      }
      return n;
    })();
    const statuses: number[] = [];
    const created: string[] = [];
    const canceled: string[] = [];
    const deadline = Date.now() + 8_000;
    while (Date.now() < deadline) {
      await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const api = i % 2 ? a : b;
          const res = await api.order(randomUUID(), { customerId: 'c-hook', items: [{ sku: s, quantity: 1 }] });
          statuses.push(res.status);
          if (res.status !== 201) return;
          created.push(res.body.id);
          if (i % 3 === 0) {
            const c = await (i % 2 ? b : a).post(`/orders/${res.body.id}/cancel`);
            statuses.push(c.status);
            if (c.status === 200) canceled.push(res.body.id);
          }
        }),
      );
    }
    stop = true;
    expect(await churning).toBeGreaterThan(10);
    expect(fails(statuses)).toEqual([]);
    expect(created.length).toBeGreaterThan(100);
    await waitFor(
      'every event at the endpoint that stayed',
      async () => created.every((id) => kept.has('order.reserved', id)) && canceled.every((id) => kept.has('order.canceled', id)),
      30_000,
      250,
    );
  } finally {
    await kept.close();
    await churn.close();
  }
}, 90_000);

it('Confirms racing Cancels and force-confirms from the other process: every answer matches where the order ended', async () => {
  const s = uniqueSku('RACE');
  expect((await a.putSku(s, 100_000)).status).toBe(200);
  const make = async () => (await a.order(randomUUID(), { customerId: 'c-race', items: [{ sku: s, quantity: 1 }] })).body.id as string;
  const mismatches: unknown[] = [];
  for (let round = 0; round < 10; round++) {
    const ids = await Promise.all(Array.from({ length: 20 }, make));
    await Promise.all(
      ids.map(async (id, i) => {
        const forced = i % 4 === 0;
        const [confirm, other] = await Promise.all([
          (i % 2 ? a : b).post(`/orders/${id}/confirm`, { paymentToken: 'tok_ok' }),
          forced
            ? (i % 2 ? b : a).admin('POST', `/admin/orders/${id}/force-confirm`, { reason: 'paid by transfer' })
            : (i % 2 ? b : a).post(`/orders/${id}/cancel`),
        ]);
        const final = (await a.get(`/orders/${id}`)).body.status;
        // The contract's mapping, from where the order ended.
        const expected =
          final === 'CONFIRM_SUCCESS'
            ? { confirm: 200, other: forced ? 200 : 409 }
            : final === 'CANCELED'
              ? { confirm: 409, other: 200 }
              : { confirm: -1, other: -1 };
        const got = { confirm: confirm.status, other: other.status };
        if (got.confirm !== expected.confirm || got.other !== expected.other) mismatches.push({ id, forced, final, got, confirmStatus: confirm.body?.status ?? confirm.body?.code });
        else if (final === 'CANCELED') expect(confirm.body.code).toBe('ORDER_CANCELED');
      }),
    );
  }
  expect(mismatches).toEqual([]);
}, 90_000);

it('a SKU row held locked by another transaction: Trys for other SKUs on the same process answer within 1 s', async () => {
  const stuck = uniqueSku('STUCK');
  const other = uniqueSku('FREE');
  expect((await a.putSku(stuck, 100)).status).toBe(200);
  expect((await a.putSku(other, 100)).status).toBe(200);
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM skus WHERE sku = $1 FOR UPDATE`, [stuck]);
    // Two Trys on the stuck SKU, apart, so they fill both of the process's Try calls in flight.
    const blocked = [a.order(randomUUID(), { customerId: 'c-stuck', items: [{ sku: stuck, quantity: 1 }] })];
    await new Promise((r) => setTimeout(r, 30));
    blocked.push(a.order(randomUUID(), { customerId: 'c-stuck', items: [{ sku: stuck, quantity: 1 }] }));
    await new Promise((r) => setTimeout(r, 30));
    const started = Date.now();
    const free = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const res = await a.order(randomUUID(), { customerId: 'c-free', items: [{ sku: other, quantity: 1 }] });
        return { status: res.status, ms: Date.now() - started };
      }),
    );
    expect(free.map((f) => f.status)).toEqual([201, 201, 201, 201, 201]);
    expect(free.filter((f) => f.ms > 1000)).toEqual([]);
    // The stuck ones are told to come back (the wait is bounded), never a 500.
    const stuckAnswers = await Promise.all(blocked);
    for (const r of stuckAnswers) expect({ status: r.status, code: r.body?.code }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE' });
  } finally {
    await holder.query('ROLLBACK');
    await holder.end();
  }
  // Once the lock is gone the SKU sells again.
  expect((await a.order(randomUUID(), { customerId: 'c-stuck', items: [{ sku: stuck, quantity: 1 }] })).status).toBe(201);
}, 60_000);
