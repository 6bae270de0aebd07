import { randomUUID } from 'node:crypto';
import { TERMINAL } from '../../src/orders/state/order-state.js';
import { authorizedMove } from '../../src/orders/state/payment-moves.js';
import { moveJson } from '../../src/orders/state/moves.js';
import { REFUND } from '../../src/orders/state/refund-state.js';
import { Query, useRolledBack } from '../support/medium.js';

/**
 * An authorization's answer applied late (API.md "Payment held at Try"): a process that got
 * "authorized" but applied it after its step's lease ran out, when another process had settled the
 * same authorization (the same gateway Idempotency-Key, so the same payment) and the order had gone
 * on. The late move loses. On a released order it owes a void (the authorization may be the only
 * thing holding the customer's money); on a confirmed one it owes nothing: that money was captured
 * for the sale, and a paid order is never released or refunded.
 */
const r = useRolledBack();

async function order(q: Query, status: string, payment: string): Promise<string> {
  const id = randomUUID();
  await q(
    `INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key, items,
                         idempotency_key, request_hash, payment_status, payment_id, authorized_minor)
     VALUES ($1::uuid, 'tcc-' || $1::text, 'late', $2, 500, 'USD', now() + interval '1 hour', 'charge-' || $1::text, '[]',
             'key-' || $1::text, 'h', $3, 'pay-' || $1::text, 500)`,
    [id, status, payment],
  );
  return id;
}

async function applyLate(q: Query, id: string) {
  const move = authorizedMove(id, { paymentId: `pay-${id}`, amountMinor: 500, marginMs: 60_000 }, { refundWatchMs: 60_000 });
  const [row] = await q<{ r_won: boolean; r_status: string; r_refund_status: string | null }>(`SELECT * FROM tcc_apply($1::jsonb, $2::text[], $3::text)`, [
    JSON.stringify([moveJson(move)]),
    TERMINAL,
    REFUND.pending,
  ]);
  const [o] = await q<{ refund_status: string | null; payment_status: string }>(`SELECT refund_status, payment_status FROM orders WHERE id = $1`, [id]);
  const owed = await q(`SELECT 1 FROM order_events WHERE order_id = $1 AND type = 'refund.owed'`, [id]);
  return { won: row.r_won, status: row.r_status, refundStatus: o.refund_status, paymentStatus: o.payment_status, owedEvents: owed.length };
}

it('on a confirmed order whose payment was captured it loses and owes nothing back', async () => {
  await r.tx(async (q) => {
    const id = await order(q, 'CONFIRM_SUCCESS', 'captured');
    expect(await applyLate(q, id)).toEqual({ won: false, status: 'CONFIRM_SUCCESS', refundStatus: null, paymentStatus: 'captured', owedEvents: 0 });
  });
});

it.each([
  ['CANCELED', 'voided'],
  ['PAY_FAILED', 'declined'],
])('on a %s order (payment %s) it loses and owes a void: the money-back round looks for the hold', async (status, payment) => {
  await r.tx(async (q) => {
    const id = await order(q, status, payment);
    expect(await applyLate(q, id)).toEqual({ won: false, status, refundStatus: REFUND.pending, paymentStatus: payment, owedEvents: 1 });
  });
});
