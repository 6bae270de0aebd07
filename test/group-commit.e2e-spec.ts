import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { stockDrift } from './support/stock.js';
import { holdKey } from './support/orders.js';
import { client } from './support/http.js';
import { startService } from './support/service.js';
import { rng } from './support/rng.js';

/**
 * The group-commit engine: concurrent Trys travel to Postgres in batches (one transaction each),
 * and every order in a batch stays all-or-nothing and independent of the others.
 */
// The Confirms racing the Trys here are about stock, not the gateway's timing: a busy machine must
// not turn their charge into an unknown outcome (202) by the harness's short gateway timeout.
const h = useHarness({ PAYMENT_TIMEOUT_MS: '5000' });

const sku = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

/** Nothing is half-written: every order has its lines, key, barrier row and first event. */
async function expectWholeOrders(): Promise<void> {
  const broken = await h.db.query(`
    SELECT o.id FROM orders o
     WHERE jsonb_array_length(o.items) = 0 OR o.idempotency_key IS NULL
        OR NOT EXISTS (SELECT 1 FROM tcc_barrier b WHERE b.transaction_id = o.transaction_id AND b.op = 'try')
        OR NOT EXISTS (SELECT 1 FROM order_events e WHERE e.order_id = o.id)`);
  expect(broken).toEqual([]);
  // Stock conserved at every location: what is reserved there is what its holding orders hold there.
  expect(await stockDrift(h.db)).toEqual([]);
}

afterEach(expectWholeOrders);

it('500 concurrent Trys of mixed quantities on one hot SKU: never oversold, every refusal leaves nothing, and batches did form', async () => {
  const s = sku('HOT');
  const stock = 600;
  await h.api.putSku(s, stock);
  const random = rng(42);
  const requests = Array.from({ length: 500 }, () => ({ key: randomUUID(), quantity: 1 + Math.floor(random() * 5) }));
  const before = await batchStats();
  const answers = await Promise.all(requests.map((r) => h.api.order(r.key, { customerId: 'c-hot', items: [{ sku: s, quantity: r.quantity }] })));
  const after = await batchStats();

  const created = requests.filter((_, i) => answers[i].status === 201);
  const refused = requests.filter((_, i) => answers[i].status === 409);
  expect(created.length + refused.length).toBe(500);
  const sold = created.reduce((n, r) => n + r.quantity, 0);
  expect(sold).toBeLessThanOrEqual(stock);
  const inv = (await h.api.get(`/inventory/${s}`)).body;
  expect(inv).toMatchObject({ onHand: stock, reserved: sold, available: stock - sold });
  for (const [i, a] of answers.entries()) {
    if (a.status !== 409) continue;
    expect(a.body).toMatchObject({ code: 'INSUFFICIENT_STOCK', sku: s, requested: requests[i].quantity });
    expect(a.body.available).toBeLessThan(requests[i].quantity);
  }
  // The stock ran out: nothing left that any refused request could have taken.
  expect(stock - sold).toBeLessThan(Math.max(...refused.map((r) => r.quantity), 1));
  // A refusal leaves nothing behind, its key included.
  const keys = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ANY ($1::text[])`, [refused.map((r) => r.key)]);
  expect(keys[0].n).toBe(0);
  const orders = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders o JOIN order_items i ON i.order_id = o.id WHERE i.sku = $1`, [s]);
  expect(orders[0].n).toBe(created.length);
  // Group commit happened: fewer database calls than Trys.
  expect(after.count - before.count).toBeLessThan(500);
  expect((after.sum - before.sum) / (after.count - before.count)).toBeGreaterThan(1);
  // A refused key is free: after a restock the same request succeeds.
  const again = refused[0];
  await h.api.putSku(s, stock + again.quantity);
  expect((await h.api.order(again.key, { customerId: 'c-hot', items: [{ sku: s, quantity: again.quantity }] })).status).toBe(201);
});

async function batchStats(): Promise<{ sum: number; count: number }> {
  const text = (await h.api.get('/metrics')).body as string;
  const read = (name: string) => Number(new RegExp(`^${name}\\{engine="try"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { sum: read('tcc_batch_size_sum'), count: read('tcc_batch_size_count') };
}

function probeCalls(text: string): number {
  return Number(/^tcc_batch_size_count\{engine="probe"\} (\S+)$/m.exec(text)?.[1] ?? 0);
}

it('sold out: a refusal goes the lock-free probe way, yet never refuses stock that came back, and a busy key still waits', async () => {
  const s = sku('SOLD');
  await h.api.putSku(s, 1);
  expect((await h.api.order(randomUUID(), { customerId: 'c-sold', items: [{ sku: s, quantity: 1 }] })).status).toBe(201);
  // The batch that refused this one told the process the SKU is empty...
  const first = await h.api.order(randomUUID(), { customerId: 'c-sold', items: [{ sku: s, quantity: 1 }] });
  expect(first.body).toMatchObject({ code: 'INSUFFICIENT_STOCK', available: 0 });
  // ...so the next refusal is the probe's, without a lock.
  const probesBefore = probeCalls((await h.api.get('/metrics')).body as string);
  const second = await h.api.order(randomUUID(), { customerId: 'c-sold', items: [{ sku: s, quantity: 1 }] });
  expect(second.body).toMatchObject({ code: 'INSUFFICIENT_STOCK', available: 0 });
  expect(probeCalls((await h.api.get('/metrics')).body as string)).toBe(probesBefore + 1);

  // Stock put back behind the process's back (another process's release, an operator): the hint
  // is stale, the probe sees the stock, and the Try reserves it.
  await h.db.query(`SELECT tcc_stock_adjust($1, 'default', 1, 'returned', NULL, 'system', NULL, NULL, NULL)`, [s]);
  const back = await h.api.order(randomUUID(), { customerId: 'c-sold', items: [{ sku: s, quantity: 1 }] });
  expect(back.status).toBe(201);
  expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 2, reserved: 2 });

  // A key another transaction is claiming right now (a duplicate in flight in another process):
  // the probe cannot answer for it, so the Try waits like any duplicate and is answered once the
  // other one is done, not refused as IDEMPOTENCY_IN_PROGRESS at once.
  const key = randomUUID();
  const held = await holdKey(h.db.url, key);
  let answeredAt = 0;
  const answer = h.api.order(key, { customerId: 'c-sold', items: [{ sku: s, quantity: 1 }] }).then((r) => ((answeredAt = Date.now()), r));
  await new Promise((r) => setTimeout(r, 300));
  expect(answeredAt).toBe(0); // not answered while the key is held
  const releasedAt = Date.now();
  await held.end('COMMIT');
  const done = await answer;
  expect(done.body).toMatchObject({ code: 'INSUFFICIENT_STOCK', available: 0 });
  expect(answeredAt).toBeGreaterThanOrEqual(releasedAt);
});

it('one Idempotency-Key sent 40 times among 200 other Trys makes exactly one order', async () => {
  const s = sku('DUP');
  await h.api.putSku(s, 10_000);
  const key = randomUUID();
  const body = { customerId: 'c-dup', items: [{ sku: s, quantity: 2 }] };
  // The 40 duplicates and the 200 others sent in a shuffled order (seeded), not all of one kind first.
  const sends = [
    ...Array.from({ length: 40 }, () => ({ dup: true, send: () => h.api.order(key, body) })),
    ...Array.from({ length: 200 }, () => ({ dup: false, send: () => h.api.order(randomUUID(), { customerId: 'c-other', items: [{ sku: s, quantity: 1 }] }) })),
  ];
  const random = rng(40);
  for (let i = sends.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [sends[i], sends[j]] = [sends[j], sends[i]];
  }
  const answers = await Promise.all(sends.map(async (x) => ({ dup: x.dup, answer: await x.send() })));
  const same = answers.filter((a) => a.dup).map((a) => a.answer);
  expect(same).toHaveLength(40);
  for (const a of same) expect([200, 201]).toContain(a.status);
  expect(same.filter((a) => a.status === 201)).toHaveLength(1);
  expect(new Set(same.map((a) => a.body.id)).size).toBe(1);
  const [{ n }] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE customer_id = 'c-dup'`);
  expect(n).toBe(1);
  expect((await h.api.get(`/inventory/${s}`)).body.reserved).toBe(2 + 200);
});

it('inside one batch call, a repeated key makes one order and a reused key with another body is refused', async () => {
  const s = sku('SQLDUP');
  await h.api.putSku(s, 10);
  const rows = await h.db.query<{ r_idx: number; r_outcome: string; r_body: string | null }>(
    `SELECT r_idx, r_outcome, r_body FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], '{}', '{}', 'priority', 60000, 0, '{TRY_SUCCESS,CONFIRM_PENDING}', NULL)
      WHERE r_idx > 0 ORDER BY r_idx`,
    [['k-a', 'k-a', 'k-b', 'k-a'], ['h1', 'h1', 'h2', 'h-other'], ['c', 'c', 'c', 'c'], [1, 2, 3, 4], [s, s, s, s], [3, 3, 1, 1]],
  );
  expect(rows.map((r) => r.r_outcome)).toEqual(['created', 'replayed', 'created', 'IDEMPOTENCY_KEY_REUSED']);
  expect(JSON.parse(rows[0].r_body!).id).toBe(JSON.parse(rows[1].r_body!).id);
  expect((await h.api.get(`/inventory/${s}`)).body.reserved).toBe(4);
});

it('300 concurrent multi-line orders over shared SKUs in every order, with confirms and cancels racing them: no deadlock, stock conserved', async () => {
  const skus = Array.from({ length: 5 }, (_, i) => sku(`ML${i}`));
  for (const s of skus) await h.api.putSku(s, 150);
  const random = rng(7);
  const orders = Array.from({ length: 300 }, () => {
    const n = 2 + Math.floor(random() * 3);
    const picked = [...skus].sort(() => random() - 0.5).slice(0, n);
    return { customerId: 'c-ml', items: picked.map((s) => ({ sku: s, quantity: 1 + Math.floor(random() * 2) })) };
  });
  const answers = await Promise.all(
    orders.map(async (body, i) => {
      const res = await h.api.order(randomUUID(), body);
      if (res.status !== 201) return [res.status];
      // Every third order is confirmed and every fifth canceled right away, racing the other Trys.
      if (i % 3 === 0) return [res.status, (await h.api.post(`/orders/${res.body.id}/confirm`)).status];
      if (i % 5 === 0) return [res.status, (await h.api.post(`/orders/${res.body.id}/cancel`)).status];
      return [res.status];
    }),
  );
  const statuses = answers.flat();
  expect(statuses.filter((s) => ![200, 201, 409].includes(s))).toEqual([]);
  expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(50);
  // Conserved: each SKU's on hand fell by exactly what confirmed orders took, and it reserves
  // exactly what holding orders hold (from the orders themselves, not from the counters).
  const held = await h.db.query<{ status: string; items: { sku: string; quantity: number }[] }>(`SELECT status, items FROM orders WHERE customer_id = 'c-ml'`);
  for (const s of skus) {
    const of = (statuses: string[]) => held.filter((o) => statuses.includes(o.status)).reduce((n, o) => n + o.items.filter((l) => l.sku === s).reduce((m, l) => m + l.quantity, 0), 0);
    const inv = (await h.api.get(`/inventory/${s}`)).body;
    expect({ sku: s, onHand: inv.onHand, reserved: inv.reserved }).toEqual({ sku: s, onHand: 150 - of(['CONFIRM_SUCCESS']), reserved: of(['TRY_SUCCESS', 'CONFIRM_PENDING']) });
  }
});

it('a process killed mid-batch loses nothing: acknowledged orders exist whole, and retried keys give each client its order exactly once', async () => {
  const s = sku('KILL');
  await h.api.putSku(s, 100_000);
  const victim = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api' });
  const api = client(victim.url);
  const keys = Array.from({ length: 600 }, () => randomUUID());
  const body = (i: number) => ({ customerId: 'c-kill', items: [{ sku: s, quantity: 1 + (i % 3) }] });
  // SIGKILL as soon as the first 50 answers are back: the rest are queued, in a batch, or committing.
  let answered = 0;
  let killed: Promise<void> | undefined;
  const inFlight = keys.map((k, i) =>
    api.order(k, body(i)).then(
      (a) => {
        if (++answered === 50) killed = victim.kill();
        return a.status;
      },
      () => 'lost' as const,
    ),
  );
  const outcomes = await Promise.all(inFlight);
  await killed;
  const acknowledged = keys.filter((_, i) => outcomes[i] === 201);
  const lost = keys.filter((_, i) => outcomes[i] !== 201);
  expect(lost.length).toBeGreaterThan(0); // the kill did land mid-stream
  // Every acknowledged order is there, whole.
  const found = await h.db.query<{ key: string }>(`SELECT key FROM idempotency_keys WHERE key = ANY ($1::text[])`, [acknowledged]);
  expect(found).toHaveLength(acknowledged.length);
  await expectWholeOrders();
  // Clients retry what got no answer, with the same keys, on a surviving process.
  const retried = await Promise.all(lost.map((k) => h.api.order(k, body(keys.indexOf(k)))));
  for (const a of retried) expect([200, 201]).toContain(a.status);
  const [{ n, units }] = await h.db.query<{ n: number; units: number }>(
    `SELECT count(*)::int AS n, coalesce(sum(i.quantity), 0)::int AS units FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.customer_id = 'c-kill'`,
  );
  expect(n).toBe(600);
  expect((await h.api.get(`/inventory/${s}`)).body.reserved).toBe(units);
});
