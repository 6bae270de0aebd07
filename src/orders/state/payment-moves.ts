import { HOLDING, ORDER_STATUSES } from './order-state.js';
import { Move, Note, PaymentChange, paymentTo } from './moves.js';

/**
 * The moves of a payment held at Try (API.md "Payment held at Try") beside the order's own
 * (moves.ts): its authorization's outcomes, a Confirm that waits for it, and the payment's state
 * alone on an order already released. Applied by tcc_apply like every move.
 */

/**
 * The authorization held the money: the payment is `authorized` and the reservation ends at least
 * marginMs before the authorization does. A CONFIRM_PENDING order (its Confirm waited for this) is
 * due for its capture at once. One that was released meanwhile is owed a void (oweRefundIfLost: the
 * money-back round voids what it finds held).
 */
export function authorizedMove(
  id: string,
  hold: { paymentId: string; amountMinor: number; expiresAt?: string; marginMs: number },
  opts: { refundWatchMs: number; call?: Note; notes?: Note[] },
): Move {
  return {
    id,
    to: null,
    from: HOLDING,
    reason: 'payment authorized',
    payment: { from: ['authorizing'], map: paymentTo('authorized', ['authorizing']), paymentId: hold.paymentId, authorizedMinor: hold.amountMinor, authorizationExpiresAt: hold.expiresAt, marginMs: hold.marginMs },
    paymentId: hold.paymentId,
    nextActionMs: 0,
    nextActionWhen: ['CONFIRM_PENDING'],
    oweRefundIfLost: true,
    refundWatchMs: opts.refundWatchMs,
    call: opts.call,
    notes: opts.notes,
  };
}

/** The authorization's outcome is unknown: it stays `authorizing`, its next attempt (or lookup) in nextActionMs. */
export function authorizationPendingMove(
  id: string,
  reason: string,
  opts: { attemptsBefore: number; addAttempts: number; nextActionMs: number; call?: Note; notes?: Note[] },
): Move {
  return {
    id,
    to: null,
    from: HOLDING,
    reason,
    payment: { from: ['authorizing'], attemptsBefore: opts.attemptsBefore, addAttempts: opts.addAttempts },
    nextActionMs: opts.nextActionMs,
    call: opts.call,
    notes: opts.notes,
  };
}

/** Only the payment moves (an order already released: a decline recorded, a hold found), whatever the order's status. */
export function paymentMove(id: string, reason: string, payment: PaymentChange, opts: { call?: Note; notes?: Note[] } = {}): Move {
  return { id, to: null, from: ORDER_STATUSES, reason, payment, keepSchedule: true, call: opts.call, notes: opts.notes };
}

/** Only a gateway call for the timeline (it happened, whatever the order is now); it moves nothing. */
export function callOnlyMove(id: string, call: Note): Move {
  return { id, to: null, from: [], reason: call.type, call };
}

/**
 * Confirm of an order whose authorization is still unsettled: CONFIRM_PENDING, its capture to
 * follow once the authorization is held. The authorization's own step (lease, next attempt) goes on.
 */
export function awaitAuthorizationMove(id: string): Move {
  return {
    id,
    to: 'CONFIRM_PENDING',
    from: ['TRY_SUCCESS'],
    reason: 'Confirm waits for the authorization to settle',
    payment: { from: ['authorizing'] },
    keepSchedule: true,
    emit: 'order.pending',
  };
}
