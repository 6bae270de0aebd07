import { Redis, RedisOptions } from 'ioredis';

/**
 * Producer connections fail fast when Redis is away (no offline queue): an enqueue after commit
 * must not hang a request — the sweeper covers what was not enqueued. Worker connections wait
 * and reconnect (BullMQ needs maxRetriesPerRequest: null for blocking commands).
 */
export function redisConnection(url: string, role: 'producer' | 'worker' | 'probe'): Redis {
  const options: RedisOptions = {
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    enableOfflineQueue: role === 'worker',
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  };
  const client = new Redis(url, options);
  // Errors are reported through health and job failures; an unhandled 'error' event would crash.
  client.on('error', () => undefined);
  return client;
}
