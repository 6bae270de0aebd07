import fc from 'fast-check';
import { lookupAgainInMs, nextAttempt } from './payment-policy.js';

const facts = fc
  .record({
    reason: fc.constantFrom('timeout' as const, 'error' as const, 'circuit_open' as const),
    maxAttempts: fc.integer({ min: 1, max: 20 }),
    retryBaseMs: fc.integer({ min: 1, max: 100_000 }),
    breakerResetMs: fc.integer({ min: 1, max: 100_000 }),
    seed: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
  })
  .chain((f) => fc.record({ attemptsBefore: fc.integer({ min: 0, max: f.maxAttempts - 1 }) }).map((a) => ({ ...f, ...a })));

describe('nextAttempt (unknown outcomes of an authorization or a capture)', () => {
  it('an open breaker never counts and waits at least most of its reset timeout', () => {
    fc.assert(
      fc.property(facts, (f) => {
        const n = nextAttempt({ ...f, random: () => f.seed });
        if (f.reason !== 'circuit_open') return;
        expect(n).toMatchObject({ counted: 0, exhausted: false, breaker: true });
        expect(n.delayMs).toBeGreaterThanOrEqual(Math.floor(f.breakerResetMs * 0.8));
      }),
    );
  });

  it('counts every other unknown outcome; the last one is exhausted and due at once, the others back off base × 2^(n-1) ±20 %', () => {
    fc.assert(
      fc.property(facts, (f) => {
        if (f.reason === 'circuit_open') return;
        const n = nextAttempt({ ...f, random: () => f.seed });
        const attempt = f.attemptsBefore + 1;
        expect(n.counted).toBe(1);
        expect(n.exhausted).toBe(attempt >= f.maxAttempts);
        if (n.exhausted) expect(n.delayMs).toBe(0);
        else {
          const raw = Math.min(3_600_000, f.retryBaseMs * 2 ** (attempt - 1));
          expect(n.delayMs).toBeGreaterThanOrEqual(Math.floor(raw * 0.8));
          expect(n.delayMs).toBeLessThanOrEqual(Math.ceil(raw * 1.2));
        }
      }),
    );
  });

  it('asks a silent gateway again within a minute at most', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 100 }), (base, n) => lookupAgainInMs(base, n) <= 60_000));
  });
});
