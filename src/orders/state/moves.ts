import { HOLDING, OrderStatus, sourcesOf } from './order-state.js';

/** A webhook event type (API.md "Webhooks"). */
export type OrderEventType =
  | 'order.reserved'
  | 'order.pending'
  | 'order.confirmed'
  | 'order.payment_failed'
  | 'order.canceled'
  | 'order.needs_attention'
  | 'refund.succeeded';

export interface Note {
  type: string;
  data: Record<string, unknown>;
}

/**
 * One order move for tcc_apply: a compare-and-set from `from` (a subset of what the state machine
 * allows into `to`) plus what goes with it. Built only by the functions below.
 */
export interface Move {
  id: string;
  to: OrderStatus;
  from: readonly OrderStatus[];
  reason: string;
  /** Extra fields on the status.changed event. */
  data?: Record<string, unknown>;
  stock?: 'commit' | 'release';
  paymentId?: string;
  /** When defined, failure_reason becomes this (null clears it). */
  failureReason?: string | null;
  addAttempts?: number;
  /** The next retry or lookup, this many ms from now (database clock); absent clears it. */
  nextActionMs?: number;
  forceConfirmed?: boolean;
  /** A released order that may have been charged is watched this long for a charge to refund. */
  refundWatchMs?: number;
  /** A charge that lost the race to a release is owed back. */
  oweRefundIfLost?: boolean;
  /** Only the holder of this attempt lease may make the move (an attempt's unknown outcome). */
  lease?: string;
  /** The gateway call the move follows: recorded whether the move wins or not. */
  call?: Note;
  /** Written only if the move wins (operator reasons, the retry schedule). */
  notes?: Note[];
  emit?: OrderEventType;
  /** Who made the move, when an operator did (a force action): its sale movements name them. */
  actor?: 'admin' | 'console';
  operator?: string | null;
}

const from = (to: OrderStatus, only: readonly OrderStatus[] = HOLDING) => sourcesOf(to).filter((s) => only.includes(s));

/** Paid: commit the stock, CONFIRM_SUCCESS. A charge that finds the order released is owed back. */
export function paidMove(
  id: string,
  reason: string,
  opts: { paymentId?: string; forced?: boolean; addAttempts?: number; refundWatchMs: number; call?: Note; notes?: Note[]; data?: Record<string, unknown> },
): Move {
  return {
    id,
    to: 'CONFIRM_SUCCESS',
    from: from('CONFIRM_SUCCESS'),
    reason,
    stock: 'commit',
    paymentId: opts.paymentId,
    forceConfirmed: opts.forced,
    failureReason: null,
    addAttempts: opts.addAttempts,
    oweRefundIfLost: !!opts.paymentId,
    refundWatchMs: opts.refundWatchMs,
    call: opts.call,
    notes: opts.notes,
    data: opts.data,
    emit: 'order.confirmed',
  };
}

/** Released: the stock goes back; PAY_FAILED or CANCELED; a possible charge is watched and refunded. */
export function releaseMove(
  id: string,
  to: Extract<OrderStatus, 'PAY_FAILED' | 'CANCELED'>,
  reason: string,
  opts: { refundWatchMs: number; addAttempts?: number; call?: Note; notes?: Note[]; data?: Record<string, unknown> },
): Move {
  return {
    id,
    to,
    from: from(to),
    reason,
    stock: 'release',
    failureReason: reason,
    addAttempts: opts.addAttempts,
    refundWatchMs: opts.refundWatchMs,
    call: opts.call,
    notes: opts.notes,
    data: opts.data,
    emit: to === 'PAY_FAILED' ? 'order.payment_failed' : 'order.canceled',
  };
}

/** Outcome unknown: CONFIRM_PENDING, holding its stock, with the next step's time stored on the order. */
export function pendingMove(
  id: string,
  reason: string,
  opts: { lease?: string; addAttempts: number; nextActionMs: number; detail?: string; call?: Note; notes?: Note[] },
): Move {
  return {
    id,
    to: 'CONFIRM_PENDING',
    from: from('CONFIRM_PENDING'),
    reason,
    lease: opts.lease,
    addAttempts: opts.addAttempts,
    nextActionMs: opts.nextActionMs,
    failureReason: opts.detail,
    call: opts.call,
    notes: opts.notes,
    emit: 'order.pending',
  };
}

/** The jsonb tcc_apply reads. */
export function moveJson(m: Move): Record<string, unknown> {
  return {
    id: m.id,
    to: m.to,
    from: m.from,
    reason: m.reason,
    data: m.data ?? null,
    stock: m.stock ?? null,
    payment_id: m.paymentId ?? null,
    set_failure: m.failureReason !== undefined,
    failure_reason: m.failureReason ?? null,
    add_attempts: m.addAttempts ?? 0,
    next_action_ms: m.nextActionMs ?? null,
    force_confirmed: m.forceConfirmed ?? false,
    refund_watch_ms: m.refundWatchMs ?? null,
    owe_refund_if_lost: m.oweRefundIfLost ?? false,
    lease: m.lease ?? null,
    call_type: m.call?.type ?? null,
    call_data: m.call?.data ?? null,
    notes: m.notes ?? null,
    emit: m.emit ?? null,
    actor: m.actor ?? null,
    operator: m.operator ?? null,
  };
}
