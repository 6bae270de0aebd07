import type { Cluster, Redis } from 'ioredis';
import { readyWithin } from '../common/with-timeout.js';

/** Wrong credentials one client address may present within a window before it is throttled. */
export const WRONG_CREDENTIALS_PER_WINDOW = 5;

/**
 * The address's wrong credentials so far (0 when none in this window), and the ms left of the
 * window. The window starts with the first wrong one and does not move with later ones.
 */
const COUNT = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
return { n, redis.call('PTTL', KEYS[1]) }
`;

/** Counts one wrong credential; returns the count with it and the ms left of the window. */
const FAIL = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { n, redis.call('PTTL', KEYS[1]) }
`;

/**
 * Takes back one count (`forgive`: an attempt counted before it was judged, then judged right). The
 * count is never taken below zero nor brought back after its window ended; at zero the window is
 * over, and the next wrong one starts a new one.
 */
const FORGIVE = `
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('DECR', KEYS[1]) <= 0 then redis.call('DEL', KEYS[1]) end
return 0
`;

type Counted = [number, number];
type Commands = {
  tccCredentialCount(key: string): Promise<Counted>;
  tccCredentialFail(key: string, windowMs: number): Promise<Counted>;
  tccCredentialForgive(key: string): Promise<number>;
};

export interface CredentialThrottleOptions {
  /** Its own connection (jobs/redis.ts, role `limiter`: no offline queue, a short command timeout). */
  redis: Redis | Cluster;
  /** QUEUE_PREFIX: deployments sharing one Redis keep their counts apart. */
  prefix: string;
  /** CREDENTIAL_THROTTLE_WINDOW_MS: the minute of the contract (shorter in tests). */
  windowMs: number;
  /** Wrong ones allowed within a window (default WRONG_CREDENTIALS_PER_WINDOW). */
  limit?: number;
  /** What is counted, as the Redis key names it (default `credential-failures`: per client address). */
  counts?: string;
}

/**
 * Wrong credentials are throttled wherever they are presented (API.md, "Errors"): a bearer token on
 * /admin/* and /tcc/*, a console session cookie that is not a live session, a sign-in token. After
 * WRONG_CREDENTIALS_PER_WINDOW wrong ones from one client address, every request from it that
 * presents a credential is answered 429 until the window (started by the first wrong one) is over —
 * a right credential too, so the answer never tells a guesser that a guess was right. Requests
 * without a credential never come here.
 *
 * Each request is decided on the count alone: a right credential is refused when the count already
 * stands at the limit (`blocked`), a wrong one when counting it takes the count past the limit
 * (`failed`, one atomic INCR) — the same condition, so whether a request is refused never depends on
 * its credential. A burst of guesses sent at once is answered 401 no more than the limit allows,
 * however they interleave: each wrong one's own INCR decides its answer. Where judging costs
 * something (a session's database read) `blocked` is asked first, and a throttled request is refused
 * before its credential is looked at.
 *
 * Where judging is slow and costly (a password's scrypt, the sign-in token's tag), an attempt is
 * counted before it is judged (`failed`) and taken back once it is judged right (`forgive`): a burst
 * of guesses sent at once then has no more than the limit judged, and the rest refused unjudged —
 * checked only beforehand, every guess of the burst was judged before the first one was counted,
 * and a right one among them answered 200 (and each held a scrypt's memory and CPU meanwhile).
 *
 * Counted in Redis, so every api process shares the count. When Redis is away (or slower than
 * its connection's command timeout), each process counts on its own in memory: the throttle still holds, per process,
 * and the admin API never goes down with Redis.
 */
export class CredentialThrottle {
  private readonly redis: Redis | Cluster;
  private readonly local = new Map<string, { n: number; until: number }>();

  private readonly limit: number;

  constructor(private readonly opts: CredentialThrottleOptions) {
    this.redis = opts.redis;
    this.limit = opts.limit ?? WRONG_CREDENTIALS_PER_WINDOW;
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('tccCredentialCount', { numberOfKeys: 1, lua: COUNT });
    this.redis.defineCommand('tccCredentialFail', { numberOfKeys: 1, lua: FAIL });
    this.redis.defineCommand('tccCredentialForgive', { numberOfKeys: 1, lua: FORGIVE });
  }

  /** Seconds (1-60) the address must wait when it is throttled now; undefined when it is not. */
  async blocked(address: string): Promise<number | undefined> {
    const [n, msLeft] = await this.ask(address, false);
    return n >= this.limit ? this.seconds(msLeft) : undefined;
  }

  /**
   * Counts a wrong credential. Seconds (1-60) to wait when the address is over the limit with it
   * (the request is then answered 429, not 401); undefined while it is within the limit.
   */
  async failed(address: string): Promise<number | undefined> {
    const [n, msLeft] = await this.ask(address, true);
    return n > this.limit ? this.seconds(msLeft) : undefined;
  }

  /**
   * Takes back a count made by `failed` for an attempt judged right after all (see the class). Where
   * Redis cannot be asked, the count in this process's memory is taken back: a count made in Redis
   * just before it went away then stays until its window ends.
   */
  async forgive(address: string): Promise<void> {
    try {
      await (this.redis as unknown as Commands).tccCredentialForgive(this.keyOf(address));
    } catch {
      const entry = this.local.get(address);
      if (entry && --entry.n <= 0) this.local.delete(address);
    }
  }

  /**
   * Resolves once Redis is connected, or after `timeoutMs`: awaited before the server listens, so
   * the first requests are counted where every process sees them; a Redis that is away only delays
   * the start (the count is then kept in memory until it comes).
   */
  async ready(timeoutMs: number): Promise<void> {
    await readyWithin(this.redis, timeoutMs);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  /** Nest calls this on the instance it provides (console.module.ts). */
  onApplicationShutdown(): void {
    this.redis.disconnect();
  }

  private keyOf(address: string): string {
    return `${this.opts.prefix}:${this.opts.counts ?? 'credential-failures'}:${address}`;
  }

  private async ask(address: string, fail: boolean): Promise<Counted> {
    const key = this.keyOf(address);
    const commands = this.redis as unknown as Commands;
    try {
      const answer = fail ? await commands.tccCredentialFail(key, this.opts.windowMs) : await commands.tccCredentialCount(key);
      return [Number(answer[0]), Number(answer[1])];
    } catch {
      return this.askLocally(address, fail);
    }
  }

  /** The same count in this process's memory, while Redis cannot be asked. */
  private askLocally(address: string, fail: boolean): Counted {
    const now = Date.now();
    let entry = this.local.get(address);
    if (entry && entry.until <= now) {
      this.local.delete(address);
      entry = undefined;
    }
    if (fail) {
      if (!entry) {
        if (this.local.size >= 100_000) this.prune(now);
        this.local.set(address, (entry = { n: 0, until: now + this.opts.windowMs }));
      }
      entry.n++;
    }
    return entry ? [entry.n, entry.until - now] : [0, -2];
  }

  /** Seconds to wait (1 up to the window's length) for `ms` left of the window. */
  private seconds(ms: number): number {
    return Math.min(Math.max(1, Math.ceil(this.opts.windowMs / 1000)), Math.max(1, Math.ceil(ms / 1000)));
  }

  private prune(now: number): void {
    for (const [address, entry] of this.local) if (entry.until <= now) this.local.delete(address);
    // Still full: the oldest windows go first (a Map iterates in insertion order).
    for (const address of this.local.keys()) {
      if (this.local.size < 100_000) break;
      this.local.delete(address);
    }
  }
}
