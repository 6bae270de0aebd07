/** The outbound gateway protocol (API.md, "Outbound payment-gateway protocol"). */
export interface GatewayPayment {
  id: string;
  status: 'succeeded' | 'declined';
  amountMinor: number;
  currency: string;
  reference: string;
  refundedMinor: number;
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
}

/** Why an outcome is unknown: the charge may or may not have happened. */
export type UnknownReason = 'timeout' | 'error' | 'circuit_open';

export type ChargeOutcome =
  | { kind: 'succeeded'; payment: GatewayPayment; latencyMs: number }
  | { kind: 'declined'; payment: GatewayPayment; latencyMs: number }
  | { kind: 'unknown'; reason: UnknownReason; detail: string; latencyMs: number };

/** The gateway did not give a usable answer (timeout, 429, 5xx, connection error, open breaker). */
export class GatewayUnavailableError extends Error {
  constructor(
    readonly reason: UnknownReason,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayUnavailableError';
  }
}

/** The gateway answered with a final 4xx (not a decline): our request was wrong, retrying won't help. */
export class GatewayRejectedError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayRejectedError';
  }
}

/** Net amount still captured by a payment: what a compensation must refund. */
export function netCaptured(p: GatewayPayment): number {
  return p.status === 'succeeded' ? Math.max(0, p.amountMinor - p.refundedMinor) : 0;
}
