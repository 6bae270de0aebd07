import { GatewayPayment, isOpenHold, netCaptured } from '../payments/gateway.types.js';

export type MismatchKind =
  | 'charged_after_release'
  | 'authorized_after_release'
  | 'no_capture'
  | 'uncaptured_authorization'
  | 'extra_authorization'
  | 'multiple_captures'
  | 'capture_on_force_confirmed';

export interface Mismatch {
  orderId: string;
  kind: MismatchKind;
  detail: string;
}

/** A finished order that was sent to the gateway, as reconciliation reads it. */
export interface SentOrder {
  id: string;
  status: string;
  force_confirmed: boolean;
  refund_status: string | null;
  created_at: string;
  /** Its refund watch is still running: the compensation is at work. */
  refund_watching: boolean;
  amount_minor: string;
  /** The payment held at Try; null for an order paid at Confirm. */
  payment_status: string | null;
  payment_id: string | null;
}

/** What the gateway still holds of an order's payments: every capture less what was refunded of it. */
export function capturedMinor(payments: GatewayPayment[]): number {
  return payments.reduce((sum, p) => sum + netCaptured(p), 0);
}

/**
 * What reconciliation makes of one finished order and the gateway's record of it (API.md). A
 * capture refunded in full (by the service or by an operator at the gateway) no longer counts.
 * - Released (CANCELED, PAY_FAILED) with money still captured: charged_after_release — once its
 *   refund watch is over; while the watch runs, the refund step is at work and owes it back.
 * - Released with an authorization still holding money: authorized_after_release (voided), once
 *   its watch is over.
 * - CONFIRM_SUCCESS with no capture or several (no_capture, multiple_captures), unless an
 *   operator force-confirmed it: then any capture is one too many (capture_on_force_confirmed).
 *   With no capture but an authorization still held: uncaptured_authorization (captured); with a
 *   capture and an authorization still held besides: extra_authorization (voided).
 */
export function findMismatch(order: SentOrder, payments: GatewayPayment[]): Mismatch | undefined {
  const orderId = order.id;
  const holds = payments.filter(isOpenHold).length;
  if (order.status !== 'CONFIRM_SUCCESS') {
    const net = capturedMinor(payments);
    if ((net === 0 && holds === 0) || order.refund_watching) return undefined;
    if (net === 0) return { orderId, kind: 'authorized_after_release', detail: `${order.status}, but ${holds} authorization(s) still hold money` };
    return { orderId, kind: 'charged_after_release', detail: `${order.status}, but ${net} is still captured` };
  }
  const captures = payments.filter((p) => netCaptured(p) > 0).length;
  if (holds > 0 && !order.force_confirmed) {
    if (captures === 0) return { orderId, kind: 'uncaptured_authorization', detail: 'confirmed, but its authorization was never captured' };
    if (captures === 1) return { orderId, kind: 'extra_authorization', detail: `confirmed and captured, but ${holds} authorization(s) still hold money besides` };
  }
  if (order.force_confirmed) {
    return captures > 0 ? { orderId, kind: 'capture_on_force_confirmed', detail: `force-confirmed by an operator, and the gateway holds ${captures} capture(s)` } : undefined;
  }
  if (captures === 0) return { orderId, kind: 'no_capture', detail: 'confirmed, but the gateway has no capture' };
  if (captures > 1) return { orderId, kind: 'multiple_captures', detail: `confirmed, but the gateway has ${captures} captures` };
  return undefined;
}
