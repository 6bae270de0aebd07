/**
 * The order state machine of API.md, in one place. Besides the Try that creates an order, only
 * tcc_apply (through OrderStore.apply, with moves built in moves.ts from the lists here) writes
 * `status`, by compare-and-set against the move's allowed sources.
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
