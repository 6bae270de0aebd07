import type { PaymentStatus } from './order-state.js';

/**
 * The compensation's states, in one place. A released order that may have been charged is owed a
 * refund check (PENDING) until its watch window passes with nothing captured (DONE). A refund that
 * keeps failing past REFUND_ALERT_AFTER_MS turns NEEDS_ATTENTION — and is still retried: a human
 * is told, the money is not forgotten.
 */
export const REFUND_STATUSES = ['PENDING', 'DONE', 'NEEDS_ATTENTION'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

export const REFUND: { readonly pending: RefundStatus; readonly done: RefundStatus; readonly needsAttention: RefundStatus } = {
  pending: 'PENDING',
  done: 'DONE',
  needsAttention: 'NEEDS_ATTENTION',
};

/** Refund rounds still to run (a round keeps going while a human looks). */
export const REFUND_OPEN: readonly RefundStatus[] = [REFUND.pending, REFUND.needsAttention];

/**
 * After a release, how long the service keeps asking the gateway for a charge to refund:
 * max(60 s, 10 × PAYMENT_TIMEOUT_MS) — REFUND_WATCH_MS when set (shorter in tests).
 */
export function refundWatchMs(env: { PAYMENT_TIMEOUT_MS: number; REFUND_WATCH_MS?: number }): number {
  return env.REFUND_WATCH_MS ?? Math.max(60_000, 10 * env.PAYMENT_TIMEOUT_MS);
}

/**
 * What a money-back round's failed lookup was for, by the order's payment: a hold that may still
 * be open (`void`: the customer's money may still be held) — one being voided, still being
 * authorized, authorized or being captured — else money to give back (`refund`), also on an order
 * whose hold ended (voided, expired) but that the round watches for a capture found later.
 */
export function lookupFor(paymentStatus: PaymentStatus | null): 'void' | 'refund' {
  return paymentStatus === 'voiding' || paymentStatus === 'authorizing' || paymentStatus === 'authorized' || paymentStatus === 'capturing' ? 'void' : 'refund';
}
