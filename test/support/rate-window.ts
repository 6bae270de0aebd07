import { Redis } from 'ioredis';

/**
 * RATE_LIMIT_WINDOW_MS for the specs that reach the checkout rate limit: the contract's minute
 * shortened, so a spec that needs its requests in one window waits seconds for one, not a minute.
 * The default (60 s) is held by src/config/env.schema.spec.ts.
 */
export const RATE_WINDOW_MS = 10_000;

/**
 * Waits until at least `needMs` are left of the limiter's current window (Redis's clock, as the
 * limiter counts), so the requests that follow land in one window.
 */
export async function roomInWindow(redisUrl: string, needMs: number, windowMs = RATE_WINDOW_MS): Promise<void> {
  const r = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const [seconds, micros] = await r.time();
    const left = windowMs - ((Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)) % windowMs);
    if (left < needMs) await new Promise((res) => setTimeout(res, left + 100));
  } finally {
    r.disconnect();
  }
}
