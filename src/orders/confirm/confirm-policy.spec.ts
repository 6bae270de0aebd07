import fc from 'fast-check';
import type { ChargeOutcome } from '../../payments/gateway.types.js';
import { decideCharge, lookupRetryDelayMs } from './confirm-policy.js';

const payment = { id: 'p', status: 'succeeded' as const, amountMinor: 100, currency: 'USD', reference: 'r', refundedMinor: 0 };

const outcomes: fc.Arbitrary<ChargeOutcome> = fc.oneof(
  fc.constant<ChargeOutcome>({ kind: 'succeeded', payment, latencyMs: 1 }),
  fc.constant<ChargeOutcome>({ kind: 'declined', payment: { ...payment, status: 'declined' }, latencyMs: 1 }),
  fc.constantFrom(400, 401, 403, 404, 422).map<ChargeOutcome>((status) => ({ kind: 'refused', status, detail: 'no', latencyMs: 1 })),
  fc.constantFrom('timeout' as const, 'error' as const, 'circuit_open' as const).map<ChargeOutcome>((reason) => ({ kind: 'unknown', reason, detail: 'x', latencyMs: 1 })),
);

const facts = fc.record({
  outcome: outcomes,
  maxAttempts: fc.integer({ min: 1, max: 20 }),
  retryBaseMs: fc.integer({ min: 1, max: 100_000 }),
  breakerResetMs: fc.integer({ min: 1, max: 100_000 }),
  seed: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
}).chain((f) => fc.record({ attemptsBefore: fc.integer({ min: 0, max: f.maxAttempts - 1 }) }).map((a) => ({ ...f, ...a })));

describe('decideCharge', () => {
  it('an answer from the gateway ends the order; only unknown outcomes keep it pending', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const d = decideCharge({ ...f, random: () => f.seed });
        if (f.outcome.kind === 'succeeded') expect(d.kind).toBe('paid');
        else if (f.outcome.kind === 'declined' || f.outcome.kind === 'refused') expect(d.kind).toBe('failed');
        else expect(d.kind).toBe('pending');
      }),
    );
  });

  it('an open breaker never counts an attempt and waits at least most of its reset timeout', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const d = decideCharge({ ...f, random: () => f.seed });
        if (f.outcome.kind === 'unknown' && f.outcome.reason === 'circuit_open') {
          expect(d).toMatchObject({ kind: 'pending', counted: 0, exhausted: false, event: 'payment.breaker_rejected', metric: 'circuit_open' });
          if (d.kind === 'pending') expect(d.delayMs).toBeGreaterThanOrEqual(Math.floor(f.breakerResetMs * 0.8));
        } else {
          expect(d.counted).toBe(1);
        }
      }),
    );
  });

  it('exhausted exactly when the unknown outcomes reach CONFIRM_MAX_ATTEMPTS; then the lookup is due at once', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const d = decideCharge({ ...f, random: () => f.seed });
        if (d.kind !== 'pending' || d.counted === 0) return;
        expect(d.exhausted).toBe(f.attemptsBefore + 1 >= f.maxAttempts);
        if (d.exhausted) expect(d.delayMs).toBe(0);
      }),
    );
  });

  it('attempt n+1 waits base × 2^(n-1), within ±20 % jitter', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const d = decideCharge({ ...f, random: () => f.seed });
        if (d.kind !== 'pending' || d.counted === 0 || d.exhausted) return;
        const n = f.attemptsBefore + 1;
        const raw = Math.min(3_600_000, f.retryBaseMs * 2 ** (n - 1));
        expect(d.delayMs).toBeGreaterThanOrEqual(Math.floor(raw * 0.8) - 1);
        expect(d.delayMs).toBeLessThanOrEqual(Math.ceil(raw * 1.2) + 1);
      }),
    );
  });

  it('a final refusal names the gateway status', () => {
    const d = decideCharge({ outcome: { kind: 'refused', status: 401, detail: 'bad key', latencyMs: 3 }, attemptsBefore: 0, maxAttempts: 5, retryBaseMs: 10, breakerResetMs: 10 });
    expect(d).toMatchObject({ kind: 'failed', failure: 'refused', reason: expect.stringContaining('401') });
  });
});

describe('lookupRetryDelayMs', () => {
  it('backs off but never beyond a minute (and jitter)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 0, max: 50 }), (base, n) => {
        expect(lookupRetryDelayMs(base, n)).toBeLessThanOrEqual(60_000);
        expect(lookupRetryDelayMs(base, n)).toBeGreaterThanOrEqual(1);
      }),
    );
  });
});
