/**
 * Delay before attempt n+1 after n unknown outcomes: base × 2^(n-1), with ±20 % jitter so a
 * burst of orders that failed together does not retry in lockstep. Capped at `maxMs`.
 */
export function retryDelayMs(baseMs: number, attempts: number, maxMs = 3_600_000, random: () => number = Math.random): number {
  const n = Math.max(1, attempts);
  const raw = Math.min(maxMs, baseMs * 2 ** Math.min(n - 1, 30));
  const jitter = 0.8 + 0.4 * random();
  return Math.max(1, Math.round(Math.min(maxMs, raw * jitter)));
}
