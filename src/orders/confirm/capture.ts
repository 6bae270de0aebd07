import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import { Move, Note, paidMove, paymentTo, pendingMove, releaseMove } from '../state/moves.js';
import { nextAttempt } from '../state/payment-policy.js';
import { refundWatchMs } from '../state/refund-state.js';
import type { Claim } from './claims.js';

/** A Confirm attempt's outcome as the move to apply, for ConfirmService. */
export type Planned =
  | { kind: 'paid'; move: Move }
  | { kind: 'failed'; move: Move; failure: 'declined' | 'refused' | 'expired' }
  | { kind: 'pending'; move: Move; exhausted: boolean };

/** The capture's key: one per order (API.md: "one Idempotency-Key per order"). */
export const captureKey = (orderId: string) => `capture-${orderId}`;

/** A capture refused because the authorization ended by itself: nothing was taken, nothing held. */
const EXPIRED = paymentTo('expired', ['capturing']);

/**
 * Confirm of an order whose payment was held at Try captures it (API.md "Payment held at Try"):
 * the amount authorized, with one key per order, no transaction open. Captured → CONFIRM_SUCCESS;
 * refused because the authorization expired or was voided → PAY_FAILED, the payment `expired`
 * (nothing taken, nothing to look at); a final refusal → PAY_FAILED, the hold voided; unknown →
 * CONFIRM_PENDING, retried with the same key and backoff exactly like a charge (tcc_claim's lease,
 * the attempt limit, then the lookup; the TTL rules of the expiry).
 */
@Injectable()
export class Captures {
  private readonly env: AppConfig['env'];
  private readonly watchMs: number;

  constructor(
    private readonly gateway: PaymentGateway,
    private readonly metrics: MetricsService,
    config: AppConfig,
  ) {
    this.env = config.env;
    this.watchMs = refundWatchMs(config.env);
  }

  /** One claimed capture attempt (the claim made the payment `capturing`). */
  async attempt(c: Claim, requestId: string | undefined, source: string): Promise<Planned> {
    const outcome = await this.gateway.capture(c.paymentId ?? '', c.amountMinor, captureKey(c.id), requestId);
    const attempt = c.attempts + 1;
    const base = { outcome: outcome.kind, latencyMs: outcome.latencyMs, attempt, source };
    switch (outcome.kind) {
      case 'succeeded': {
        this.metrics.confirmAttempts.inc({ outcome: 'success' });
        const call: Note = { type: 'payment.capture', data: { ...base, paymentId: outcome.payment.id, capturedMinor: outcome.payment.capturedMinor } };
        const captured = outcome.payment.capturedMinor ?? c.amountMinor;
        return { kind: 'paid', move: paidMove(c.id, 'payment captured', { paymentId: outcome.payment.id, capturedMinor: captured, addAttempts: 1, refundWatchMs: this.watchMs, call }) };
      }
      case 'closed': {
        this.metrics.confirmAttempts.inc({ outcome: 'declined' });
        const call: Note = { type: 'payment.capture', data: { ...base, paymentId: outcome.payment.id, paymentStatus: outcome.payment.status } };
        const reason = `capture refused: the authorization ${outcome.payment.status === 'voided' ? 'was voided' : 'expired'}`;
        // The capture's one key answered that the authorization ended: nothing was taken or is held,
        // and nothing can land on it any more, so there is nothing to watch for.
        return { kind: 'failed', failure: 'expired', move: releaseMove(c.id, 'PAY_FAILED', reason, { addAttempts: 1, refundWatchMs: undefined, call, payment: { map: EXPIRED } }) };
      }
      case 'refused': {
        this.metrics.confirmAttempts.inc({ outcome: 'error' });
        const call: Note = { type: 'payment.capture', data: { ...base, status: outcome.status, detail: outcome.detail } };
        // Nothing was captured; the hold is voided like any release's.
        return { kind: 'failed', failure: 'refused', move: releaseMove(c.id, 'PAY_FAILED', `capture refused by the gateway (HTTP ${outcome.status})`, { addAttempts: 1, refundWatchMs: this.watchMs, call }) };
      }
      case 'unknown': {
        const n = nextAttempt({ reason: outcome.reason, attemptsBefore: c.attempts, maxAttempts: this.env.CONFIRM_MAX_ATTEMPTS, retryBaseMs: this.env.CONFIRM_RETRY_BASE_MS, breakerResetMs: this.env.BREAKER_RESET_TIMEOUT_MS });
        this.metrics.confirmAttempts.inc({ outcome: outcome.reason });
        const call: Note = { type: n.breaker ? 'payment.breaker_rejected' : 'payment.capture', data: { ...base, attempt: c.attempts + n.counted, reason: outcome.reason, detail: outcome.detail } };
        const notes = n.exhausted ? [] : [{ type: 'confirm.retry_scheduled', data: { attempt: c.attempts + n.counted + 1, inMs: n.delayMs } }];
        const move = pendingMove(c.id, `capture outcome unknown (${outcome.reason})`, { lease: c.lease ?? undefined, addAttempts: n.counted, nextActionMs: n.delayMs, detail: outcome.detail, call, notes });
        return { kind: 'pending', move, exhausted: n.exhausted };
      }
    }
  }
}
