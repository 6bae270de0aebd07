import { GatewayPayment, netCaptured } from '../payments/gateway.types.js';

export type MismatchKind = 'charged_after_release' | 'no_capture' | 'multiple_captures' | 'capture_on_force_confirmed';

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
 * - CONFIRM_SUCCESS with no capture or several (no_capture, multiple_captures), unless an
 *   operator force-confirmed it: then any capture is one too many (capture_on_force_confirmed).
 */
export function findMismatch(order: SentOrder, payments: GatewayPayment[]): Mismatch | undefined {
  const orderId = order.id;
  if (order.status !== 'CONFIRM_SUCCESS') {
    const net = capturedMinor(payments);
    if (net === 0 || order.refund_watching) return undefined;
    return { orderId, kind: 'charged_after_release', detail: `${order.status}, but ${net} is still captured` };
  }
  const captures = payments.filter((p) => netCaptured(p) > 0).length;
  if (order.force_confirmed) {
    return captures > 0 ? { orderId, kind: 'capture_on_force_confirmed', detail: `force-confirmed by an operator, and the gateway holds ${captures} capture(s)` } : undefined;
  }
  if (captures === 0) return { orderId, kind: 'no_capture', detail: 'confirmed, but the gateway has no capture' };
  if (captures > 1) return { orderId, kind: 'multiple_captures', detail: `confirmed, but the gateway has ${captures} captures` };
  return undefined;
}
