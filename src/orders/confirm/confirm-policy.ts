import type { ConfirmOutcomeLabel } from '../../metrics/metrics.service.js';
import type { ChargeOutcome } from '../../payments/gateway.types.js';
import { retryDelayMs } from '../../common/backoff.js';

export interface ChargeFacts {
  outcome: ChargeOutcome;
  /** Unknown outcomes counted before this attempt. */
  attemptsBefore: number;
  maxAttempts: number;
  retryBaseMs: number;
  breakerResetMs: number;
  random?: () => number;
}

export type ChargeDecision =
  | { kind: 'paid'; counted: 1; event: 'payment.charge'; metric: ConfirmOutcomeLabel }
  | { kind: 'failed'; counted: 1; event: 'payment.charge'; metric: ConfirmOutcomeLabel; failure: 'declined' | 'refused'; reason: string }
  | {
      kind: 'pending';
      counted: 0 | 1;
      event: 'payment.charge' | 'payment.breaker_rejected';
      metric: ConfirmOutcomeLabel;
      /** Wait this long before the next step (0 when exhausted: the lookup is due now). */
      delayMs: number;
      /** CONFIRM_MAX_ATTEMPTS unknown outcomes: the next step asks the gateway instead of charging. */
      exhausted: boolean;
      reason: string;
    };

/**
 * What one charge attempt's outcome means for the order (API.md, "Timing rules"), as a pure
 * function: succeeded → paid; declined or a final refusal (400/401/403/404/422) → PAY_FAILED at
 * once; anything else is an unknown outcome → CONFIRM_PENDING, attempt n+1 after base × 2^(n-1)
 * with jitter, until CONFIRM_MAX_ATTEMPTS unknown outcomes, after which the gateway is asked.
 * An attempt the open breaker refused is deferred (at least the breaker's reset timeout) and does
 * not count.
 */
export function decideCharge(f: ChargeFacts): ChargeDecision {
  const o = f.outcome;
  switch (o.kind) {
    case 'succeeded':
      return { kind: 'paid', counted: 1, event: 'payment.charge', metric: 'success' };
    case 'declined':
      return { kind: 'failed', counted: 1, event: 'payment.charge', metric: 'declined', failure: 'declined', reason: 'payment declined' };
    case 'refused':
      return {
        kind: 'failed',
        counted: 1,
        event: 'payment.charge',
        metric: 'error',
        failure: 'refused',
        reason: `payment refused by the gateway (HTTP ${o.status})`,
      };
    case 'unknown': {
      if (o.reason === 'circuit_open') {
        const backoff = retryDelayMs(f.retryBaseMs, Math.max(1, f.attemptsBefore), undefined, f.random);
        const breaker = retryDelayMs(f.breakerResetMs, 1, undefined, f.random);
        return {
          kind: 'pending',
          counted: 0,
          event: 'payment.breaker_rejected',
          metric: 'circuit_open',
          delayMs: Math.max(backoff, breaker),
          exhausted: false,
          reason: 'payment outcome unknown (circuit_open)',
        };
      }
      const attempt = f.attemptsBefore + 1;
      const exhausted = attempt >= f.maxAttempts;
      return {
        kind: 'pending',
        counted: 1,
        event: 'payment.charge',
        metric: o.reason,
        delayMs: exhausted ? 0 : retryDelayMs(f.retryBaseMs, attempt, undefined, f.random),
        exhausted,
        reason: `payment outcome unknown (${o.reason})`,
      };
    }
  }
}

/** A gateway lookup that got no answer: ask again later, backing off up to a minute. */
export function lookupRetryDelayMs(retryBaseMs: number, attempts: number, random?: () => number): number {
  return retryDelayMs(retryBaseMs, attempts, 60_000, random);
}
