import { retryDelayMs } from '../../common/backoff.js';
import type { UnknownReason } from '../../payments/gateway.types.js';

export interface UnknownFacts {
  reason: UnknownReason;
  /** Unknown outcomes counted before this attempt. */
  attemptsBefore: number;
  maxAttempts: number;
  retryBaseMs: number;
  breakerResetMs: number;
  random?: () => number;
}

export interface NextAttempt {
  /** Whether this attempt counts toward CONFIRM_MAX_ATTEMPTS (an open breaker's refusal does not). */
  counted: 0 | 1;
  /** Wait this long before the next step (0 when exhausted: the lookup is due now). */
  delayMs: number;
  /** CONFIRM_MAX_ATTEMPTS unknown outcomes: the next step asks the gateway instead of calling again. */
  exhausted: boolean;
  /** The open breaker refused the call: it was never sent. */
  breaker: boolean;
}

/**
 * After an unknown outcome of an authorization or a capture (API.md, "Timing rules", which hold
 * for a held payment's calls as for a charge): attempt n+1 after base × 2^(n-1) with jitter, until
 * CONFIRM_MAX_ATTEMPTS unknown outcomes, after which the gateway is asked. An attempt the open
 * breaker refused is deferred (at least the breaker's reset timeout) and does not count.
 */
export function nextAttempt(f: UnknownFacts): NextAttempt {
  if (f.reason === 'circuit_open') {
    const backoff = retryDelayMs(f.retryBaseMs, Math.max(1, f.attemptsBefore), undefined, f.random);
    const breaker = retryDelayMs(f.breakerResetMs, 1, undefined, f.random);
    return { counted: 0, delayMs: Math.max(backoff, breaker), exhausted: false, breaker: true };
  }
  const attempt = f.attemptsBefore + 1;
  const exhausted = attempt >= f.maxAttempts;
  return { counted: 1, delayMs: exhausted ? 0 : retryDelayMs(f.retryBaseMs, attempt, undefined, f.random), exhausted, breaker: false };
}

/** A gateway lookup that got no answer: ask again later, backing off up to a minute. */
export function lookupAgainInMs(retryBaseMs: number, attempts: number, random?: () => number): number {
  return retryDelayMs(retryBaseMs, attempts, 60_000, random);
}
