import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { redisConnection } from '../jobs/redis.js';

/** Wrong admin tokens one client address may send to the sign-in within a minute. */
export const SIGN_IN_FAILURES_PER_MINUTE = 5;

/**
 * Takes one attempt of the address's minute before its token is looked at (the first attempt starts
 * the minute). Returns the attempt's number and the ms left of the minute.
 */
const ATTEMPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end
return { n, redis.call('PTTL', KEYS[1]) }
`;

/** Gives an attempt back (its token was right, or it never got to be judged); never past the minute's end. */
const GIVE_BACK = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
return 0
`;

/**
 * The console sign-in's guard against guessing: after SIGN_IN_FAILURES_PER_MINUTE wrong tokens from
 * one client address, every sign-in from it is refused until a minute has passed since the first of
 * them. Each sign-in takes its attempt atomically before its token is judged and gives it back when
 * the token was right, so a burst of guesses sent at once is judged no more than the limit allows
 * (a check first and a count after would let every guess of the burst through the check). Counted
 * in Redis, so every api process shares the count. Like the checkout rate limit it fails open: when
 * Redis is away the sign-in goes on (the token itself, at least 16 characters compared in constant
 * time, is what keeps the door shut).
 */
@Injectable()
export class SignInThrottle implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(config: AppConfig) {
    this.redis = redisConnection(config.env.REDIS_URL, 'probe');
    this.redis.defineCommand('tccSignInAttempt', { numberOfKeys: 1, lua: ATTEMPT });
    this.redis.defineCommand('tccSignInGiveBack', { numberOfKeys: 1, lua: GIVE_BACK });
    this.prefix = `${config.env.QUEUE_PREFIX}:console-sign-in-failures:`;
  }

  /**
   * Takes an attempt for the address: undefined when its token may be judged, else the seconds
   * (1-60) it must wait. An attempt that was allowed and whose token was right is given back.
   */
  async attempt(address: string): Promise<number | undefined> {
    try {
      const [n, ttl] = await this.commands().tccSignInAttempt(this.prefix + address);
      return n > SIGN_IN_FAILURES_PER_MINUTE ? seconds(ttl) : undefined;
    } catch {
      return undefined; // Redis away: not throttled (see above)
    }
  }

  /** An allowed attempt that was not a wrong token (the right one, or a body never judged). */
  async giveBack(address: string): Promise<void> {
    try {
      await this.commands().tccSignInGiveBack(this.prefix + address);
    } catch {
      // Redis away: the attempt lapses with its minute.
    }
  }

  private commands(): { tccSignInAttempt(key: string): Promise<[number, number]>; tccSignInGiveBack(key: string): Promise<number> } {
    return this.redis as unknown as ReturnType<SignInThrottle['commands']>;
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}

function seconds(ms: number): number {
  return Math.min(60, Math.max(1, Math.ceil(ms / 1000)));
}
