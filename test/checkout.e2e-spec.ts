import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { holdKey } from './support/orders.js';

/**
 * Try / Confirm / Cancel through the real process, real Postgres and Redis, and the simulator over
 * HTTP. Retries are pushed far out here (CONFIRM_RETRY_BASE_MS) so what a Confirm request itself
 * does can be seen before any background worker touches the order.
 */
const h = useHarness({ CONFIRM_RETRY_BASE_MS: '600000' });

const sku = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
const stock = async (s: string) => (await h.api.get(`/inventory/${s}`)).body;



afterEach(async () => {
  const broken = await h.db.query(`SELECT sku FROM stock WHERE reserved < 0 OR reserved > on_hand`);
  expect(broken).toEqual([]);
});

describe('Try', () => {
  it('200 concurrent Tries on a SKU with stock 50: exactly 50 succeed, nothing oversold', async () => {
    const s = sku('HOT');
    await h.api.putSku(s, 50);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => h.api.order(randomUUID(), { customerId: 'c', items: [{ sku: s, quantity: 1 }] })),
    );
    const byStatus = answers.reduce<Record<number, number>>((acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }), {});
    expect(byStatus).toEqual({ 201: 50, 409: 150 });
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === 'INSUFFICIENT_STOCK')).toBe(true);
    expect(await stock(s)).toMatchObject({ onHand: 50, reserved: 50, available: 0 });
    const [{ n }] = await h.db.query<{ n: number }>(
      `SELECT coalesce(sum(i.quantity), 0)::int AS n FROM order_items i JOIN orders o ON o.id = i.order_id
        WHERE i.sku = $1 AND o.status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`,
      [s],
    );
    expect(n).toBe(50);
  });

  it('12 concurrent requests with one Idempotency-Key make exactly one order', async () => {
    const s = sku('IDEM');
    await h.api.putSku(s, 100);
    const key = randomUUID();
    const body = { customerId: 'c-idem', items: [{ sku: s, quantity: 3 }] };
    const answers = await Promise.all(Array.from({ length: 12 }, () => h.api.order(key, body)));
    const ok = answers.filter((a) => a.status === 200 || a.status === 201);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers) expect([200, 201, 409]).toContain(a.status);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(1);
    const [{ n }] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE customer_id = 'c-idem'`);
    expect(n).toBe(1);
    expect(await stock(s)).toMatchObject({ reserved: 3 });
  });

  it('a replay returns the same order (key order aside) and reserves nothing more', async () => {
    const s = sku('REPLAY');
    await h.api.putSku(s, 10);
    const key = randomUUID();
    const first = await h.api.order(key, { customerId: 'c', items: [{ sku: s, quantity: 2 }] });
    const again = await h.api.order(key, { items: [{ quantity: 2, sku: s }], customerId: 'c' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await stock(s)).toMatchObject({ reserved: 2 });
  });

  it('a duplicate that waits longer than IDEMPOTENCY_WAIT_MS answers 409 IDEMPOTENCY_IN_PROGRESS', async () => {
    const key = randomUUID();
    // Another Try holds the key, the way tcc_try_batch does while its batch runs: its transaction
    // holds the key's advisory lock and has not committed yet.
    const held = await holdKey(h.db.url, key);
    try {
      const s = sku('INPROG');
      await h.api.putSku(s, 5);
      const answer = await h.api.order(key, { customerId: 'c', items: [{ sku: s, quantity: 1 }] });
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      expect(await stock(s)).toMatchObject({ reserved: 0 });
    } finally {
      await held.end('ROLLBACK');
    }
  });

  it('multi-line orders over the same SKUs in opposite orders never deadlock', async () => {
    const [a, b] = [sku('A'), sku('B')];
    await h.api.putSku(a, 30);
    await h.api.putSku(b, 30);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        h.api.order(randomUUID(), { customerId: 'c', items: i % 2 ? [{ sku: a, quantity: 1 }, { sku: b, quantity: 1 }] : [{ sku: b, quantity: 1 }, { sku: a, quantity: 1 }] }),
      ),
    );
    expect(answers.filter((x) => x.status === 201)).toHaveLength(30);
    expect(answers.filter((x) => x.status === 409)).toHaveLength(30);
    expect(await stock(a)).toMatchObject({ reserved: 30 });
    expect(await stock(b)).toMatchObject({ reserved: 30 });
  });
});

describe('Confirm and Cancel', () => {
  async function reserve(s: string, quantity = 2, onHand = 10) {
    await h.api.putSku(s, onHand, 1250);
    const res = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku: s, quantity }] });
    expect(res.status).toBe(201);
    return res.body;
  }

  it('a successful payment commits the stock: 200 CONFIRM_SUCCESS, one charge', async () => {
    const s = sku('PAY');
    const order = await reserve(s);
    const res = await h.api.post(`/orders/${order.id}/confirm`, {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CONFIRM_SUCCESS', confirmAttempts: 1, paymentId: expect.any(String) });
    expect(await stock(s)).toMatchObject({ onHand: 8, reserved: 0 });
    expect(await h.sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 2500 });
    const again = await h.api.post(`/orders/${order.id}/confirm`);
    expect(again.status).toBe(200);
    expect((await h.sim.ledger()).chargeRequests).toBeGreaterThan(0);
    expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 1 });
  });

  it('a declined payment releases the stock: 402 PAY_FAILED with the order JSON', async () => {
    const s = sku('DECL');
    const order = await reserve(s);
    const res = await h.api.post(`/orders/${order.id}/confirm`, { paymentToken: 'tok_decline' });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ id: order.id, status: 'PAY_FAILED' });
    expect(await stock(s)).toMatchObject({ onHand: 10, reserved: 0 });
    expect(await h.sim.chargesFor(order.id)).toEqual({ succeeded: 0, declined: 1, netCapturedMinor: 0 });
    expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(402);
    expect((await h.api.post(`/orders/${order.id}/cancel`)).body.status).toBe('PAY_FAILED');
  });

  it('a gateway that times out after charging leaves the order CONFIRM_PENDING holding its stock; confirming again never charges twice', async () => {
    const s = sku('HANG');
    const order = await reserve(s);
    // The answer hangs past the harness's 2 s PAYMENT_TIMEOUT_MS.
    await h.sim.setFaults({ hangMs: 5000 });
    await h.sim.script(['charge_then_hang']);
    const first = await h.api.post(`/orders/${order.id}/confirm`);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: 'CONFIRM_PENDING', confirmAttempts: 1 });
    expect(await stock(s)).toMatchObject({ onHand: 10, reserved: 2 });
    expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 1 });

    // Confirming again answers the current state: the next attempt is not due yet (backoff).
    const second = await h.api.post(`/orders/${order.id}/confirm`);
    expect(second.status).toBe(202);
    expect(second.body).toMatchObject({ status: 'CONFIRM_PENDING', confirmAttempts: 1 });
    expect(await stock(s)).toMatchObject({ onHand: 10, reserved: 2 });
    expect(await h.sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 2500 });
    const keys = new Set((await h.db.query<{ payment_key: string }>(`SELECT payment_key FROM orders WHERE id = $1`, [order.id])).map((r) => r.payment_key));
    expect(keys.size).toBe(1);
  });

  it('cancel releases the stock, is idempotent, and a canceled order refuses Confirm', async () => {
    const s = sku('CXL');
    const order = await reserve(s, 3);
    const res = await h.api.post(`/orders/${order.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('CANCELED');
    expect(await stock(s)).toMatchObject({ onHand: 10, reserved: 0 });
    expect((await h.api.post(`/orders/${order.id}/cancel`)).status).toBe(200);
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    const confirm = await h.api.post(`/orders/${order.id}/confirm`);
    expect(confirm.status).toBe(409);
    expect(confirm.body.code).toBe('ORDER_CANCELED');
    expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 0 });
  });

  it('concurrent cancels and confirms of one order: one outcome, stock moved once', async () => {
    const s = sku('RACE');
    const order = await reserve(s, 1, 5);
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => h.api.post(`/orders/${order.id}/cancel`)),
      ...Array.from({ length: 5 }, () => h.api.post(`/orders/${order.id}/confirm`)),
    ]);
    const final = (await h.api.get(`/orders/${order.id}`)).body;
    const inv = await stock(s);
    const charges = await h.sim.chargesFor(order.id);
    if (final.status === 'CONFIRM_SUCCESS') {
      expect(inv).toMatchObject({ onHand: 4, reserved: 0 });
      expect(charges).toMatchObject({ succeeded: 1, netCapturedMinor: 1250 });
    } else {
      expect(final.status).toBe('CANCELED');
      expect(inv).toMatchObject({ onHand: 5, reserved: 0 });
    }
    // Every answer agrees with where the order ended: a Cancel answers 200 CANCELED only if it was
    // canceled, 409 ORDER_CONFIRMED only if it was paid; a Confirm 200 only if paid, 409
    // ORDER_CANCELED only if canceled, 202 only with the order still in progress as it read it.
    const paid = final.status === 'CONFIRM_SUCCESS';
    const said = answers.map((a, i) => ({ route: i < 5 ? 'cancel' : 'confirm', status: a.status, what: a.body.code ?? a.body.status }));
    const agrees = ({ route, status, what }: (typeof said)[number]) =>
      route === 'cancel'
        ? (status === 200 && what === 'CANCELED' && !paid) || (status === 409 && what === 'ORDER_CONFIRMED' && paid)
        : (status === 200 && what === 'CONFIRM_SUCCESS' && paid) ||
          (status === 409 && what === 'ORDER_CANCELED' && !paid) ||
          (status === 202 && (what === 'TRY_SUCCESS' || what === 'CONFIRM_PENDING'));
    expect(said.filter((a) => !agrees(a))).toEqual([]);
    // And the side that won said so at least once.
    expect(said.some((a) => a.status === 200)).toBe(true);
  });

  it('the Idempotency-Key survives a restart', async () => {
    const s = sku('RESTART');
    await h.api.putSku(s, 10);
    const key = randomUUID();
    const body = { customerId: 'c', items: [{ sku: s, quantity: 1 }] };
    const first = await h.api.order(key, body);
    await h.restart();
    const again = await h.api.order(key, body);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await stock(s)).toMatchObject({ reserved: 1 });
  });
});
