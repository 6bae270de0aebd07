/**
 * The order state machine of API.md, in one place — and, for an order whose payment is held at
 * Try, its payment's own (below). Besides the Try that creates an order, only tcc_apply (through
 * OrderStore.apply, with moves built in moves.ts from the lists here) writes `status`, by
 * compare-and-set against the move's allowed sources; the payment's state changes the same way.
 */
export const ORDER_STATUSES = ['TRY_SUCCESS', 'CONFIRM_PENDING', 'CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Orders that hold stock. */
export const HOLDING: readonly OrderStatus[] = ['TRY_SUCCESS', 'CONFIRM_PENDING'];
export const TERMINAL: readonly OrderStatus[] = ['CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'];

const ALLOWED: Record<OrderStatus, readonly OrderStatus[]> = {
  TRY_SUCCESS: ['CONFIRM_PENDING', 'CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'],
  // CONFIRM_PENDING -> CONFIRM_PENDING records another unknown outcome (attempt count, next retry).
  CONFIRM_PENDING: ['CONFIRM_PENDING', 'CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'],
  CONFIRM_SUCCESS: [],
  PAY_FAILED: [],
  CANCELED: [],
};

/** The states an order may be in for a move to `to`; the CAS's WHERE status IN (…) list. */
export function sourcesOf(to: OrderStatus): OrderStatus[] {
  return ORDER_STATUSES.filter((from) => canMove(from, to));
}

export function canMove(from: OrderStatus, to: OrderStatus): boolean {
  return ALLOWED[from].includes(to);
}

export function isTerminal(status: OrderStatus): boolean {
  return TERMINAL.includes(status);
}

/** Confirm answers the current state by one mapping (API.md): 200, 202, 402, or ORDER_CANCELED. */
export function confirmHttpStatus(status: OrderStatus): 200 | 202 | 402 | 'ORDER_CANCELED' {
  switch (status) {
    case 'CONFIRM_SUCCESS':
      return 200;
    case 'TRY_SUCCESS':
    case 'CONFIRM_PENDING':
      return 202;
    case 'PAY_FAILED':
      return 402;
    case 'CANCELED':
      return 'ORDER_CANCELED';
  }
}

/**
 * The payment of an order authorized at Try (API.md "Payment held at Try"), beside its status:
 * - authorizing: asked, outcome unknown (in flight, or settled in the background);
 * - authorized: the money is held; declined: it never was;
 * - capturing: Confirm asked for the capture, outcome unknown until it ends; captured;
 * - voiding: the order was released while money may be held, a void is owed; voided: nothing held;
 * - expired: the authorization ended by itself (a capture or void found it expired).
 * An order paid at Confirm has none (NULL).
 */
export const PAYMENT_STATUSES = ['authorizing', 'authorized', 'declined', 'capturing', 'captured', 'voiding', 'voided', 'expired'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

const PAYMENT_ALLOWED: Record<PaymentStatus, readonly PaymentStatus[]> = {
  // -> expired: the lookup after unknown outcomes found the authorization expired already.
  authorizing: ['authorized', 'declined', 'expired', 'voiding', 'voided'],
  // authorized -> voided: a release of an order that never reached the gateway (a total of 0) holds nothing;
  // -> captured: reconciliation captured a confirmed order's authorization.
  authorized: ['capturing', 'captured', 'voiding', 'voided'],
  capturing: ['captured', 'expired', 'voiding'],
  // A void that finds the hold captured (409 succeeded): the money is taken, and refunded instead.
  voiding: ['voided', 'expired', 'captured'],
  // A hold found late (an authorization that landed after the release was settled) is voided again.
  voided: ['voiding'],
  declined: ['voiding'],
  captured: [],
  expired: [],
};

export function canMovePayment(from: PaymentStatus, to: PaymentStatus): boolean {
  return PAYMENT_ALLOWED[from].includes(to);
}

/** The payment states a move to `to` may start from (its compare-and-set). */
export function paymentSourcesOf(to: PaymentStatus): PaymentStatus[] {
  return PAYMENT_STATUSES.filter((from) => canMovePayment(from, to));
}

/** Confirm may capture only what is held: these wait (202) for the authorization to settle. */
export const PAYMENT_UNSETTLED: readonly PaymentStatus[] = ['authorizing'];
/** Confirm captures from these (capturing: a capture already asked for, retried with its key). */
export const PAYMENT_CAPTURABLE: readonly PaymentStatus[] = ['authorized', 'capturing'];
/** The states in which the gateway may hold money for the order (a release owes a void). */
export const PAYMENT_MAY_HOLD: readonly PaymentStatus[] = ['authorized', 'capturing'];
