import { GatewayPayment, GatewayUnavailableError } from '../../payments/gateway.types.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import type { Note } from './moves.js';

export interface PaymentLookup {
  /** Every payment the gateway holds for the order; undefined when it could not be asked. */
  payments?: GatewayPayment[];
  /** The call as the order's timeline records it (a move's `call`). */
  call: Note;
}

/**
 * Asks the gateway what became of an order's charge (Confirm once its attempts are used up, the
 * expiry at the TTL). Never throws: a gateway that cannot answer is a lookup without payments,
 * and the caller does not guess.
 */
export async function lookUpPayments(gateway: PaymentGateway, id: string, requestId: string | undefined): Promise<PaymentLookup> {
  const started = performance.now();
  const latencyMs = () => Math.round(performance.now() - started);
  try {
    const payments = await gateway.lookup(id, requestId);
    const summary = payments.map((p) => ({ id: p.id, status: p.status, amountMinor: p.amountMinor, refundedMinor: p.refundedMinor }));
    return { payments, call: { type: 'payment.lookup', data: { outcome: 'answered', latencyMs: latencyMs(), payments: summary } } };
  } catch (err) {
    const reason = err instanceof GatewayUnavailableError ? err.reason : 'error';
    const type = reason === 'circuit_open' ? 'payment.breaker_rejected' : 'payment.lookup';
    return { call: { type, data: { outcome: 'failed', reason, detail: (err as Error).message, latencyMs: latencyMs() } } };
  }
}
