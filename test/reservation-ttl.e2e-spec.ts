import { inTransaction, lockWaiters } from './support/database.js';
import { waitFor } from './support/http.js';
import { reserve, uniqueSku, waitForStatus, TERMINAL } from './support/orders.js';
import { useHarness } from './support/harness.js';
import { HANG_ENV } from './support/service.js';

/** The reservation TTL is a hard deadline: a paid order is finished, anything else released. */
const h = useHarness({ ...HANG_ENV, RESERVATION_TTL_MS: '2500', CONFIRM_RETRY_BASE_MS: '600000' });


beforeEach(() => h.sim.reset());


it('the TTL passes without Confirm: CANCELED, stock released, counted in the metrics', async () => {
  const s = uniqueSku('TTL');
  const order = await reserve(h.api, s, 4);
  expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ reserved: 4 });
  const done = await waitForStatus(h.api, order.id, TERMINAL);
  expect(done).toMatchObject({ status: 'CANCELED', failureReason: expect.stringMatching(/expired/) });
  expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 10, reserved: 0 });
  expect((await h.api.get('/metrics')).body).toMatch(/tcc_reservations_expired_total\{result="canceled"\} [1-9]/);
  expect((await h.sim.ledger()).chargeRequests).toBe(0);
});

it('the TTL fires while the charge in fact succeeded: CONFIRM_SUCCESS, never released', async () => {
  const s = uniqueSku('TTLPAID');
  const order = await reserve(h.api, s, 1);
  await h.sim.setFaults({ hangMs: 10_000 });
  await h.sim.script(['charge_then_hang']);
  expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
  const done = await waitForStatus(h.api, order.id, TERMINAL);
  const events = (await h.api.admin('GET', `/admin/orders/${order.id}/events`)).body.data;
  expect({ status: done.status, failureReason: done.failureReason, events }).toMatchObject({ status: 'CONFIRM_SUCCESS' });
  expect(await h.sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 1000 });
  expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 9, reserved: 0 });
});

it('at the TTL an unanswered lookup ends the order CANCELED, and a charge found later is refunded', async () => {
  const s = uniqueSku('TTLLOOK');
  const order = await reserve(h.api, s, 2);
  await h.sim.setFaults({ hangMs: 10_000, lookupDown: true });
  await h.sim.script(['charge_then_hang']);
  expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
  const done = await waitForStatus(h.api, order.id, TERMINAL);
  expect(done.status).toBe('CANCELED');
  expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 10, reserved: 0 });
  expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 1, netCapturedMinor: 2000 });

  await h.sim.setFaults({ lookupDown: false });
  // The gateway's record first, then the order's: the service records the refund after its answer.
  const eventTypes = async () => (await h.api.admin('GET', `/admin/orders/${order.id}/events`)).body.data.map((e: any) => e.type) as string[];
  await waitFor('the refund of the late charge, and the order to record it', async () => (await h.sim.chargesFor(order.id)).netCapturedMinor === 0 && (await eventTypes()).includes('refund.succeeded'));
  expect(await eventTypes()).toContain('refund.succeeded');
  // Refunded once: more rounds find nothing left to refund.
  await new Promise((r) => setTimeout(r, 1500));
  const ledger = await h.sim.ledger();
  const paymentIds = ledger.payments.filter((p) => p.reference === order.id).map((p) => p.id);
  expect(ledger.refunds.filter((r) => paymentIds.includes(r.paymentId))).toHaveLength(1);
});

it('a refund the gateway made but the order never recorded (a round that died in between) is recorded by the next round, once, and announced once', async () => {
  expect((await h.api.admin('PUT', '/admin/webhooks/refunds-found', { url: 'http://127.0.0.1:9/', events: ['refund.succeeded'], secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` })).status).toBe(200);
  const order = await reserve(h.api, uniqueSku('TTLFOUND'), 2);
  await h.sim.setFaults({ hangMs: 10_000, lookupDown: true });
  await h.sim.script(['charge_then_hang']);
  expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
  expect((await waitForStatus(h.api, order.id, TERMINAL)).status).toBe('CANCELED');
  // What a round leaves when it dies after the gateway's refund, before its record: the refund, made
  // with the round's own key, and nothing on the order.
  const payment = (await h.sim.ledger()).payments.find((p) => p.reference === order.id)!;
  const made = await fetch(`${h.sim.url}/payments/${payment.id}/refunds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': `refund-${payment.id}-0` },
    body: JSON.stringify({ amountMinor: 2000 }),
  });
  expect(made.status).toBe(201);
  await h.sim.setFaults({ lookupDown: false });
  const refunds = async () => ((await h.api.admin('GET', `/admin/orders/${order.id}/events`)).body.data as { type: string; data: any }[]).filter((e) => e.type === 'refund.succeeded');
  await waitFor('the next round to record the refund it finds', async () => (await refunds()).length > 0);
  // More rounds (one a second) find it recorded: no second record, no second refund.
  await new Promise((r) => setTimeout(r, 1500));
  expect((await refunds()).map((e) => e.data)).toEqual([expect.objectContaining({ paymentId: payment.id, amountMinor: 2000 })]);
  const [{ announced }] = await h.db.query<{ announced: number }>(`SELECT count(*)::int AS announced FROM webhook_deliveries WHERE order_id = $1 AND type = 'refund.succeeded'`, [order.id]);
  expect(announced).toBe(1);
  expect((await h.sim.ledger()).refunds.filter((r) => r.paymentId === payment.id)).toHaveLength(1);
  expect(await h.sim.chargesFor(order.id)).toMatchObject({ netCapturedMinor: 0 });
  expect((await h.api.admin('DELETE', '/admin/webhooks/refunds-found')).status).toBe(204);
});

it('Confirm after the TTL does not charge: the deadline wins', async () => {
  const s = uniqueSku('LATE');
  const order = await reserve(h.api, s, 1);
  await new Promise((r) => setTimeout(r, 2700));
  const res = await h.api.post(`/orders/${order.id}/confirm`);
  expect(res.status).toBe(409);
  expect(res.body.code).toBe('ORDER_CANCELED');
  expect((await h.sim.ledger()).chargeRequests).toBe(0);
});

it('Confirm racing the expiry: each order is paid or released, never both', async () => {
  const orders = [];
  for (let i = 0; i < 8; i++) orders.push(await reserve(h.api, uniqueSku(`EDGE${i}`), 1));
  await h.sim.setFaults({ latencyMs: 150 });
  // Each Confirm aimed at its own order's deadline: from 200 ms before it to 150 ms after.
  const answers = await Promise.all(
    orders.map((o, i) => {
      const at = new Date(o.reservationExpiresAt).getTime() - 200 + i * 50;
      return new Promise((r) => setTimeout(r, Math.max(0, at - Date.now()))).then(() => h.api.post(`/orders/${o.id}/confirm`));
    }),
  );
  for (const [i, o] of orders.entries()) {
    const done = await waitForStatus(h.api, o.id, TERMINAL);
    // The Confirm's answer agrees with where the order ended (202: still in progress as it read it).
    const answered = { status: answers[i].status, what: answers[i].body.code ?? answers[i].body.status };
    expect({ id: o.id, answered }).toEqual({
      id: o.id,
      answered: answered.status === 202 ? answered : done.status === 'CONFIRM_SUCCESS' ? { status: 200, what: 'CONFIRM_SUCCESS' } : { status: 409, what: 'ORDER_CANCELED' },
    });
    const inv = (await h.api.get(`/inventory/${o.items[0].sku}`)).body;
    if (done.status === 'CONFIRM_SUCCESS') {
      expect(await h.sim.chargesFor(o.id)).toMatchObject({ succeeded: 1, netCapturedMinor: 1000 });
      expect(inv).toMatchObject({ onHand: 9, reserved: 0 });
    } else {
      expect(done.status).toBe('CANCELED');
      expect(inv).toMatchObject({ onHand: 10, reserved: 0 });
      await waitFor(`no net charge on ${o.id}`, async () => (await h.sim.chargesFor(o.id)).netCapturedMinor === 0);
    }
  }
});

/** Until no session waits for a lock and each of `pids` is idle: what they were doing is committed. */
const settled = (pids: Set<number>) =>
  waitFor(
    'the waiting sessions to be done with the order',
    async () => (await lockWaiters(h.db)).length === 0 && (await h.db.query(`SELECT 1 FROM pg_stat_activity WHERE pid = ANY ($1::int[]) AND state <> 'idle'`, [[...pids]])).length === 0,
    10_000,
    50,
  );

it("a Confirm's claim still committing when the TTL passes: the expiry waits for it, then leaves the order to that Confirm", async () => {
  const s = uniqueSku('CLAIMING');
  const order = await reserve(h.api, s, 1);
  const waiters = new Set<number>();
  // Confirm's claim of the order, made before the deadline (its lease, its charge request), not yet
  // committed: tcc_claim as Confirm calls it, in a transaction held open until the expiry waits.
  await inTransaction(h.db, async (claim) => {
    const [c] = (await claim.query(`SELECT r_claimed FROM tcc_claim(ARRAY[$1]::uuid[], ARRAY['tok_ok'], ARRAY[false], 20000, ARRAY['TRY_SUCCESS', 'CONFIRM_PENDING'], NULL, NULL, NULL)`, [order.id])).rows;
    expect(c.r_claimed).toBe(true);
    // Past the deadline the expiry (its job, or the sweeper) reaches the order and waits for the claim's lock.
    await waitFor('the expiry to wait for the claim', async () => (await lockWaiters(h.db)).map((pid) => waiters.add(pid)).length > 0, 15_000, 50);
  });
  await settled(waiters);
  // The claim committed first: its charge may be on its way, so the order still holds its stock.
  expect((await h.api.get(`/orders/${order.id}`)).body.status).toBe('TRY_SUCCESS');
  expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ reserved: 1 });
});

it('an Extend sent before the TTL and committed after it: the expiry, waiting behind it, finds the new deadline and releases nothing', async () => {
  const s = uniqueSku('EXTENDING');
  const order = await reserve(h.api, s, 1);
  const waiters = new Set<number>();
  // Another transaction holds the order's row (a Cancel or a claim on its way), so the Extend,
  // sent well before the deadline, waits; past the deadline the expiry waits behind it.
  const extended = await inTransaction(h.db, async (holder) => {
    await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.id]);
    const sent = h.api.post(`/orders/${order.id}/extend`, { extendByMs: 20_000 });
    await waitFor('the Extend and then the expiry to wait', async () => (await lockWaiters(h.db)).map((pid) => waiters.add(pid)).length >= 2, 15_000, 50);
    return { sent }; // awaited once the transaction has committed: the Extend waits for it
  });
  await settled(waiters);
  const answer = await extended.sent;
  expect(answer.status).toBe(200);
  expect((await h.api.get(`/orders/${order.id}`)).body).toMatchObject({ status: 'TRY_SUCCESS', reservationExpiresAt: answer.body.reservationExpiresAt });
  expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ reserved: 1 });
});
