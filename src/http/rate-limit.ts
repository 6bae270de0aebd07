import { Redis } from 'ioredis';

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
 * One fixed window per minute and client address, counted in Redis so every api process shares
 * it. The window is Redis's clock (TIME), not the process's, so processes with skewed clocks count
 * into the same window. Returns the hit's number in its window and the milliseconds left of it.
 */
const HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = math.floor(now / 60000)
local key = KEYS[1] .. ':' .. window
local n = redis.call('INCR', key)
if n == 1 then redis.call('PEXPIRE', key, 61000) end
return { n, 60000 - (now % 60000) }
`;

export interface RateLimitOptions {
  perMinute: number;
  redisUrl: string;
  /** QUEUE_PREFIX: deployments sharing one Redis keep their counts apart. */
  prefix: string;
  /** Past this, Redis is treated as away and the request goes on. */
  timeoutMs?: number;
}

type HitCommand = (key: string) => Promise<[number, number]>;

/**
 * RATE_LIMIT_PER_MINUTE per client address. It fails open: when Redis is away, slow or refuses, the
 * request goes on (a rate limit must never take checkout down with it). The address is the TCP
 * peer's (X-Forwarded-For is not trusted): behind a proxy, every client shares the proxy's.
 */
export class RateLimiter {
  private readonly redis: Redis;
  private readonly hitCommand: HitCommand;

  constructor(private readonly opts: RateLimitOptions) {
    this.redis = new Redis(opts.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: opts.timeoutMs ?? 250,
      connectTimeout: 1000,
      enableAutoPipelining: true,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('tccRateHit', { numberOfKeys: 1, lua: HIT });
    this.hitCommand = (key) => (this.redis as unknown as { tccRateHit: HitCommand }).tccRateHit(key);
  }

  /**
   * Resolves once the connection to Redis is ready, or after `timeoutMs`: awaited before the server
   * listens, so the limit holds from the first request — yet a Redis that is away at start-up only
   * delays the start, it never stops it (the limiter fails open until Redis comes).
   */
  async ready(timeoutMs: number): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.redis.once('ready', done);
    });
  }

  /** Seconds the client must wait (1-60) when it is over its limit; undefined to go on. */
  async check(address: string): Promise<number | undefined> {
    let answer: [number, number];
    try {
      answer = await this.hitCommand(`${this.opts.prefix}:ratelimit:${address}`);
    } catch {
      return undefined;
    }
    const [count, msLeft] = answer.map(Number);
    if (!(count > this.opts.perMinute)) return undefined;
    return Math.min(60, Math.max(1, Math.ceil(msLeft / 1000)));
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
