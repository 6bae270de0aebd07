import { HOLDING, OrderStatus, PAYMENT_MAY_HOLD, PAYMENT_STATUSES, PaymentStatus, paymentSourcesOf, sourcesOf } from './order-state.js';

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

/** What a payment's state becomes, by what it is now (a state not named stays as it is). */
export type PaymentMap = Partial<Record<PaymentStatus, PaymentStatus>>;

/** A move's part on the payment of an order authorized at Try (nothing on an order paid at Confirm). */
export interface PaymentChange {
  /** The move wins only while the payment is in one of these (a compare-and-set). */
  from?: readonly PaymentStatus[];
  map?: PaymentMap;
  /** The map for an order that never reached the gateway (a total of 0: nothing can be held). */
  unsentMap?: PaymentMap;
  paymentId?: string;
  authorizedMinor?: number;
  capturedMinor?: number;
  /** The authorization's expiry: the reservation then ends at least marginMs before it. */
  authorizationExpiresAt?: string;
  marginMs?: number;
  /** The move wins only if this many authorization attempts were made (the attempt's compare-and-set). */
  attemptsBefore?: number;
  addAttempts?: number;
}

/**
 * One order move for tcc_apply: a compare-and-set from `from` (a subset of what the state machine
 * allows into `to`; `to` null: the status stays, only the payment moves) plus what goes with it.
 * Built only by the functions below.
 */
export interface Move {
  id: string;
  to: OrderStatus | null;
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
  /** nextActionMs only for an order (then) in one of these states; others get none. */
  nextActionWhen?: readonly OrderStatus[];
  /** The attempt lease and the next step stay as they are (a move made beside a running step). */
  keepSchedule?: boolean;
  payment?: PaymentChange;
  forceConfirmed?: boolean;
  /**
   * A released order that may have been charged is watched this long for a charge to refund.
   * Absent: it cannot owe anything (a definite decline, a final refusal of its only request).
   */
  refundWatchMs?: number;
  /** The attempt this move records never left (the breaker refused it) and was the first: no charge request reached the gateway. */
  unsent?: boolean;
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
  /** The actor and principal as http/actor.ts's ledgerActor writes them (the ledger splits them). */
  actor?: string;
  operator?: string | null;
}

const from = (to: OrderStatus, only: readonly OrderStatus[] = HOLDING) => sourcesOf(to).filter((s) => only.includes(s));

/** Every payment state the payment machine allows into `to` (of `only`), mapped to it. */
export function paymentTo(to: PaymentStatus, only: readonly PaymentStatus[] = PAYMENT_STATUSES): PaymentMap {
  return Object.fromEntries(paymentSourcesOf(to).filter((s) => only.includes(s)).map((s) => [s, to]));
}

/** A release voids what may be held (the money-back round, refund.service.ts, makes the call); nothing was held if nothing was sent. */
const RELEASE_PAYMENT: PaymentChange = { map: paymentTo('voiding', PAYMENT_MAY_HOLD), unsentMap: paymentTo('voided', PAYMENT_MAY_HOLD) };
/** A payment captured: CONFIRM_SUCCESS through a capture. */
const CAPTURED: PaymentMap = paymentTo('captured', ['capturing']);

/** Paid: commit the stock, CONFIRM_SUCCESS. A charge that finds the order released is owed back. */
export function paidMove(
  id: string,
  reason: string,
  opts: { paymentId?: string; forced?: boolean; addAttempts?: number; refundWatchMs: number; call?: Note; notes?: Note[]; data?: Record<string, unknown>; capturedMinor?: number },
): Move {
  return {
    id,
    to: 'CONFIRM_SUCCESS',
    payment: { map: CAPTURED, capturedMinor: opts.capturedMinor },
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

/**
 * Released: the stock goes back; PAY_FAILED or CANCELED; a possible charge is watched and refunded,
 * a possible hold voided. `refundWatchMs: undefined` says the order cannot owe anything (a definite
 * decline, a final refusal of its only request, a declined authorization), so it is never watched.
 */
export function releaseMove(
  id: string,
  to: Extract<OrderStatus, 'PAY_FAILED' | 'CANCELED'>,
  reason: string,
  opts: { refundWatchMs: number | undefined; addAttempts?: number; call?: Note; notes?: Note[]; data?: Record<string, unknown>; payment?: PaymentChange; lease?: string },
): Move {
  return {
    id,
    to,
    from: from(to),
    reason,
    lease: opts.lease,
    payment: opts.payment ?? RELEASE_PAYMENT,
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
  opts: { lease?: string; addAttempts: number; nextActionMs: number; detail?: string; call?: Note; notes?: Note[]; unsent?: boolean },
): Move {
  return {
    id,
    to: 'CONFIRM_PENDING',
    from: from('CONFIRM_PENDING'),
    reason,
    lease: opts.lease,
    unsent: opts.unsent,
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
    payment_id: m.paymentId ?? m.payment?.paymentId ?? null,
    set_failure: m.failureReason !== undefined,
    failure_reason: m.failureReason ?? null,
    add_attempts: m.addAttempts ?? 0,
    next_action_ms: m.nextActionMs ?? null,
    force_confirmed: m.forceConfirmed ?? false,
    refund_watch_ms: m.refundWatchMs ?? null,
    unsent: m.unsent ?? false,
    owe_refund_if_lost: m.oweRefundIfLost ?? false,
    lease: m.lease ?? null,
    call_type: m.call?.type ?? null,
    call_data: m.call?.data ?? null,
    notes: m.notes ?? null,
    emit: m.emit ?? null,
    actor: m.actor ?? null,
    operator: m.operator ?? null,
    next_action_when: m.nextActionWhen ?? null,
    keep_schedule: m.keepSchedule ?? false,
    pay_from: m.payment?.from ?? null,
    pay_map: m.payment?.map ?? null,
    pay_unsent_map: m.payment?.unsentMap ?? null,
    authorized_minor: m.payment?.authorizedMinor ?? null,
    captured_minor: m.payment?.capturedMinor ?? null,
    auth_expires_at: m.payment?.authorizationExpiresAt ?? null,
    auth_margin_ms: m.payment?.marginMs ?? null,
    auth_attempts_before: m.payment?.attemptsBefore ?? null,
    add_auth_attempts: m.payment?.addAttempts ?? 0,
  };
}
