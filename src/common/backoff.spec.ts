import fc from 'fast-check';
import { retryDelayMs } from './backoff.js';

describe('retryDelayMs', () => {
  it('doubles from the base without jitter in the middle of the band', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4].map((n) => retryDelayMs(1000, n, 1e9, mid))).toEqual([1000, 2000, 4000, 8000]);
  });

  it('stays within ±20 % of base × 2^(n-1) and under the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 1, noNaN: true }), (base, n, r) => {
        const d = retryDelayMs(base, n, 60_000, () => r);
        const nominal = Math.min(60_000, base * 2 ** (n - 1));
        return d >= Math.floor(nominal * 0.8) && d <= Math.min(60_000, Math.ceil(nominal * 1.2));
      }),
    );
  });
});
