import type { Cluster, Redis } from 'ioredis';
import { readyWithin } from '../common/with-timeout.js';

/** The checkout routes RATE_LIMIT_PER_MINUTE applies to, as `METHOD route-template`. */
export const RATE_LIMITED_ROUTES: ReadonlySet<string> = new Set([
  'POST /orders',
  'GET /orders/:id',
  'POST /orders/:id/confirm',
  'POST /orders/:id/cancel',
  'POST /orders/:id/extend',
  'GET /inventory/:sku',
]);

/**
 * One fixed window per minute (ARGV[1] ms: RATE_LIMIT_WINDOW_MS) and client address, counted in
 * Redis so every api process shares it. The window is Redis's clock (TIME), not the process's, so
 * processes with skewed clocks count into the same window. Returns the hit's number in its window
 * and the milliseconds left of it.
 * The window's key is made here from KEYS[1], whose hash tag (the address) keeps it in KEYS[1]'s
 * slot on a cluster.
 */
const HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local size = tonumber(ARGV[1])
local window = math.floor(now / size)
local key = KEYS[1] .. ':' .. window
local n = redis.call('INCR', key)
if n == 1 then redis.call('PEXPIRE', key, size + 1000) end
return { n, size - (now % size) }
`;

export interface RateLimitOptions {
  perMinute: number;
  /** RATE_LIMIT_WINDOW_MS: the contract's minute (shorter in tests). */
  windowMs: number;
  /** Its own connection (jobs/redis.ts, role `limiter`): no offline queue, 250 ms per command. */
  redis: Redis | Cluster;
  /** QUEUE_PREFIX: deployments sharing one Redis keep their counts apart. */
  prefix: string;
}

type HitCommand = (key: string, windowMs: number) => Promise<[number, number]>;

/**
 * RATE_LIMIT_PER_MINUTE per client address (http/client-address.ts: the TCP peer, or behind a
 * TRUST_PROXY proxy the address it forwards). It fails open: when Redis is away, slow or refuses,
 * the request goes on (a rate limit must never take checkout down with it).
 */
export class RateLimiter {
  private readonly redis: Redis | Cluster;
  private readonly hitCommand: HitCommand;

  constructor(private readonly opts: RateLimitOptions) {
    this.redis = opts.redis;
    this.redis.defineCommand('tccRateHit', { numberOfKeys: 1, lua: HIT });
    this.hitCommand = (key, windowMs) => (this.redis as unknown as { tccRateHit: HitCommand }).tccRateHit(key, windowMs);
  }

  /**
   * Resolves once the connection to Redis is ready, or after `timeoutMs`: awaited before the server
   * listens, so the limit holds from the first request — yet a Redis that is away at start-up only
   * delays the start, it never stops it (the limiter fails open until Redis comes).
   */
  async ready(timeoutMs: number): Promise<void> {
    await readyWithin(this.redis, timeoutMs);
  }

  /** Seconds the client must wait (1-60, the rest of the window) when it is over its limit; undefined to go on. */
  async check(address: string): Promise<number | undefined> {
    let answer: [number, number];
    try {
      answer = await this.hitCommand(`${this.opts.prefix}:ratelimit:{${address}}`, this.opts.windowMs);
    } catch {
      return undefined;
    }
    const [count, msLeft] = answer.map(Number);
    if (!(count > this.opts.perMinute)) return undefined;
    return Math.min(Math.ceil(this.opts.windowMs / 1000), Math.max(1, Math.ceil(msLeft / 1000)));
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
