import { randomUUID } from 'node:crypto';
import { REFUND_SQL } from '../../src/orders/cancel/refund.sql.js';
import { REFUND, REFUND_OPEN } from '../../src/orders/state/refund-state.js';
import { Query, useRolledBack } from '../support/medium.js';

/**
 * A money-back round (src/orders/cancel/refund.service.ts) holds its order for a lease. A round
 * that outlives its lease (a paused process) while a newer one took the order over ends as a
 * compare-and-set on its own lease: it neither closes the newer round's watch nor records its
 * failure over the newer one's.
 */
const r = useRolledBack();

async function owed(q: Query): Promise<string> {
  const id = randomUUID();
  await q(
    `INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key, items,
                         idempotency_key, request_hash, refund_status, refund_next_at, refund_owed_at, refund_check_until)
     VALUES ($1::uuid, 'tcc-' || $1::text, 'round', 'CANCELED', 500, 'USD', now(), 'charge-' || $1::text, '[]',
             'key-' || $1::text, 'h', $2, now() - interval '1 second', now(), now() - interval '1 second')`,
    [id, REFUND.pending],
  );
  return id;
}

type Claimed = { lease: string; watch_over: boolean };
const claim = async (q: Query, id: string, leaseMs: number) => (await q<Claimed>(REFUND_SQL.claimRound.text, [id, leaseMs, REFUND_OPEN]))[0];
/** A round ends with nothing failing: it says whether the watch ends (REFUND_SQL.roundDone's $6). */
const done = (q: Query, id: string, round: Claimed) => q(REFUND_SQL.roundDone.text, [id, 1000, REFUND.done, REFUND_OPEN, round.lease, round.watch_over]);
const state = async (q: Query, id: string) =>
  (await q<{ refund_status: string; refund_failures: number; failed_events: number }>(
    `SELECT refund_status, refund_failures, (SELECT count(*)::int FROM order_events e WHERE e.order_id = o.id AND e.type = 'refund.failed') AS failed_events FROM orders o WHERE o.id = $1`,
    [id],
  ))[0];

it("a round past its lease, another round having taken the order, changes nothing when it ends; the newer round's end counts", async () => {
  await r.tx(async (q) => {
    const id = await owed(q);
    const stale = await claim(q, id, 1000);
    expect(stale).toBeDefined();
    // Its lease runs out (the process paused); another round takes the order over.
    await q(`UPDATE orders SET refund_next_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const current = await claim(q, id, 5000);
    expect(current).toBeDefined();
    expect(current.lease).not.toBe(stale.lease);

    // The stale round ends: done (the watch is over) or failed. Neither lands.
    expect(await done(q, id, { lease: stale.lease, watch_over: true })).toEqual([]);
    await q(REFUND_SQL.roundFailed.text, [id, 1, 1000, JSON.stringify({ call: 'void' }), REFUND_OPEN, stale.lease]);
    expect(await state(q, id)).toEqual({ refund_status: REFUND.pending, refund_failures: 0, failed_events: 0 });

    // The current round's failure lands.
    await q(REFUND_SQL.roundFailed.text, [id, 1, 1000, JSON.stringify({ call: 'void' }), REFUND_OPEN, current.lease]);
    expect(await state(q, id)).toEqual({ refund_status: REFUND.pending, refund_failures: 1, failed_events: 1 });
  });
});

it('a round within its lease ends as before: done once the watch is over', async () => {
  await r.tx(async (q) => {
    const id = await owed(q);
    const round = await claim(q, id, 5000);
    expect(round.watch_over).toBe(true);
    await done(q, id, round);
    expect(await state(q, id)).toEqual({ refund_status: REFUND.done, refund_failures: 0, failed_events: 0 });
  });
});

it('a round whose watch ran out while it was at the gateway does not end the watch: a last round is due now, and that one ends it', async () => {
  await r.tx(async (q) => {
    const id = await owed(q);
    await q(`UPDATE orders SET refund_check_until = now() + interval '1 minute' WHERE id = $1`, [id]);
    const round = await claim(q, id, 5000);
    expect(round.watch_over).toBe(false);
    // The watch runs out while the round waits for the gateway.
    await q(`UPDATE orders SET refund_check_until = now() - interval '1 second' WHERE id = $1`, [id]);
    await done(q, id, round);
    expect(await state(q, id)).toEqual({ refund_status: REFUND.pending, refund_failures: 0, failed_events: 0 });
    const [{ due }] = await q<{ due: boolean }>(`SELECT refund_next_at <= now() AS due FROM orders WHERE id = $1`, [id]);
    expect(due).toBe(true);
    const last = await claim(q, id, 5000);
    expect(last.watch_over).toBe(true);
    await done(q, id, last);
    expect(await state(q, id)).toEqual({ refund_status: REFUND.done, refund_failures: 0, failed_events: 0 });
  });
});

it('one refund recorded by two rounds (both got its answer): on the timeline once, announced once; another refund still counts', async () => {
  await r.tx(async (q) => {
    const id = await owed(q);
    await q(`INSERT INTO webhooks (name, url, events, secret) VALUES ('refunds-once', 'http://127.0.0.1:9/', ARRAY['refund.succeeded'], 'whsec_x')`);
    const refund = (refundId: string, amountMinor: number) => JSON.stringify({ paymentId: 'pay_1', refundId, amountMinor });
    const { lease } = await claim(q, id, 5000);
    await q(REFUND_SQL.refunded.text, [id, refund('re_1', 300), lease]);
    await q(REFUND_SQL.refunded.text, [id, refund('re_1', 300), lease]);
    await q(REFUND_SQL.refunded.text, [id, refund('re_2', 200), lease]);
    const [counts] = await q<{ events: number; deliveries: number }>(
      `SELECT (SELECT count(*)::int FROM order_events WHERE order_id = $1 AND type = 'refund.succeeded') AS events,
              (SELECT count(*)::int FROM webhook_deliveries WHERE order_id = $1 AND type = 'refund.succeeded') AS deliveries`,
      [id],
    );
    expect(counts).toEqual({ events: 2, deliveries: 2 });
    expect(await q(REFUND_SQL.recordedRefunds.text, [id, 'pay_1'])).toEqual([{ recorded: '500' }]);
  });
});

it('a round that outlived its lease records no refund: the round that took the order over records that money itself', async () => {
  await r.tx(async (q) => {
    const id = await owed(q);
    const stale = await claim(q, id, 1000);
    await q(`UPDATE orders SET refund_next_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const current = await claim(q, id, 5000);
    await q(REFUND_SQL.refunded.text, [id, JSON.stringify({ paymentId: 'pay_1', refundId: 're_1', amountMinor: 500 }), stale.lease]);
    expect(await q(REFUND_SQL.recordedRefunds.text, [id, 'pay_1'])).toEqual([{ recorded: '0' }]);
    await q(REFUND_SQL.refunded.text, [id, JSON.stringify({ paymentId: 'pay_1', refundId: 'found-pay_1-500', amountMinor: 500 }), current.lease]);
    expect(await q(REFUND_SQL.recordedRefunds.text, [id, 'pay_1'])).toEqual([{ recorded: '500' }]);
  });
});
