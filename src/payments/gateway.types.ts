/** The outbound gateway protocol (API.md, "Outbound payment-gateway protocol"). */
export interface GatewayPayment {
  id: string;
  /**
   * A charge: succeeded or declined. An authorization (`capture: false`): authorized while it
   * holds the money, then succeeded once captured, voided, or expired (or declined at once).
   */
  status: 'succeeded' | 'declined' | 'authorized' | 'voided' | 'expired';
  /** What was charged, or authorized. */
  amountMinor: number;
  currency: string;
  reference: string;
  refundedMinor: number;
  /** Authorizations: what was captured of it. */
  capturedMinor?: number;
  /** Authorizations: until when it can be captured. */
  authorizationExpiresAt?: string;
}

export interface GatewayRefund {
  id: string;
  paymentId: string;
  status: 'succeeded';
  amountMinor: number;
}

export interface ChargeRequest {
  idempotencyKey: string;
  amountMinor: number;
  currency: string;
  reference: string;
  paymentToken?: string | null;
  /** The X-Request-Id of the client request that caused this call, passed on to the gateway. */
  requestId?: string;
}

/** Why an outcome is unknown: the charge may or may not have happened. */
export type UnknownReason = 'timeout' | 'error' | 'circuit_open';

export type ChargeOutcome =
  | { kind: 'succeeded'; payment: GatewayPayment; latencyMs: number }
  | { kind: 'declined'; payment: GatewayPayment; latencyMs: number }
  /** The gateway rejected the request itself (400, 401, 403, 404, 422): nothing was charged. */
  | { kind: 'refused'; status: number; detail: string; latencyMs: number }
  | { kind: 'unknown'; reason: UnknownReason; detail: string; latencyMs: number };

/** The gateway did not give a usable answer (timeout, 408/409/425/429, 5xx, connection error, open breaker). */
export class GatewayUnavailableError extends Error {
  constructor(
    readonly reason: UnknownReason,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayUnavailableError';
  }
}

/** The gateway answered with a final refusal of the request (not a decline): retrying won't help. */
export class GatewayRejectedError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayRejectedError';
  }
}

/** The statuses API.md makes a final refusal: the request was rejected, nothing was charged. */
export const FINAL_REFUSALS: readonly number[] = [400, 401, 403, 404, 422];

/** The outcome of a capture of an authorization. */
export type CaptureOutcome =
  | { kind: 'succeeded'; payment: GatewayPayment; latencyMs: number }
  /** It can no longer be captured (the gateway answered 409 expired or voided): nothing was taken. */
  | { kind: 'closed'; payment: GatewayPayment; latencyMs: number }
  | { kind: 'refused'; status: number; detail: string; latencyMs: number }
  | { kind: 'unknown'; reason: UnknownReason; detail: string; latencyMs: number };

/** The outcome of a void: the hold ended (voided, or expired already), or it had been captured. */
export type VoidOutcome =
  | { kind: 'voided'; payment: GatewayPayment; latencyMs: number }
  | { kind: 'captured'; payment: GatewayPayment; latencyMs: number }
  | { kind: 'refused'; status: number; detail: string; latencyMs: number }
  | { kind: 'unknown'; reason: UnknownReason; detail: string; latencyMs: number };

/** Net amount still captured by a payment: what a compensation must refund. */
export function netCaptured(p: GatewayPayment): number {
  return p.status === 'succeeded' ? Math.max(0, (p.capturedMinor ?? p.amountMinor) - p.refundedMinor) : 0;
}

/**
 * A held payment that ended without taking anything: the gateway's payments for the order include
 * an authorization that expired or was voided, and none that holds or took money. Nothing can
 * land on it any more (a capture of it is refused), so its order owes nothing.
 */
export function holdEnded(payments: readonly GatewayPayment[]): boolean {
  return !payments.some((p) => p.status === 'authorized' || p.status === 'succeeded') && payments.some((p) => p.status === 'expired' || p.status === 'voided');
}

/** An authorization still holding the customer's money: what a compensation must void. */
export function isOpenHold(p: GatewayPayment): boolean {
  return p.status === 'authorized';
}
