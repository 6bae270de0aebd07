import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { redisConnection } from '../jobs/redis.js';

/** Wrong admin tokens one client address may send to the sign-in within a minute. */
export const SIGN_IN_FAILURES_PER_MINUTE = 5;

/** Counts a wrong token; the first of a window starts its minute. Returns the count and the ms left. */
const FAIL = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end
return { n, redis.call('PTTL', KEYS[1]) }
`;

/**
 * The console sign-in's guard against guessing: after SIGN_IN_FAILURES_PER_MINUTE wrong tokens from
 * one client address, every sign-in from it is refused until a minute has passed since the first of
 * them. Counted in Redis, so every api process shares the count. Like the checkout rate limit it
 * fails open: when Redis is away the sign-in goes on (the token itself, at least 16 characters
 * compared in constant time, is what keeps the door shut).
 */
@Injectable()
export class SignInThrottle implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(config: AppConfig) {
    this.redis = redisConnection(config.env.REDIS_URL, 'probe');
    this.redis.defineCommand('tccSignInFail', { numberOfKeys: 1, lua: FAIL });
    this.prefix = `${config.env.QUEUE_PREFIX}:console-sign-in-failures:`;
  }

  /** Seconds the address must wait (1-60) before it may try again; undefined when it may try now. */
  async waitFor(address: string): Promise<number | undefined> {
    try {
      const [count, ttl] = await Promise.all([this.redis.get(this.prefix + address), this.redis.pttl(this.prefix + address)]);
      return Number(count) >= SIGN_IN_FAILURES_PER_MINUTE && ttl > 0 ? seconds(ttl) : undefined;
    } catch {
      return undefined;
    }
  }

  /** A wrong token from the address: counted toward its minute. */
  async failed(address: string): Promise<void> {
    try {
      await (this.redis as unknown as { tccSignInFail(key: string): Promise<[number, number]> }).tccSignInFail(this.prefix + address);
    } catch {
      // Redis away: nothing counted (see above).
    }
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}

function seconds(ms: number): number {
  return Math.min(60, Math.max(1, Math.ceil(ms / 1000)));
}
