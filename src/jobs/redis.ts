import { Cluster, Redis, RedisOptions } from 'ioredis';
import type { HostPort } from '../config/address-lists.js';
import type { Env } from '../config/env.schema.js';

/** A connection to the deployment's Redis: one server (or a Sentinel group's master), or a cluster. */
export type RedisClient = Redis | Cluster;

/**
 * What a connection is for. Producers (enqueues after commit) and probes (health, sign-in
 * throttling) fail fast when Redis is away (no offline queue): an enqueue must not hang a request
 * — the sweeper covers what was not enqueued. Workers wait and reconnect (BullMQ needs
 * maxRetriesPerRequest: null for its blocking commands). The checkout rate limit gives up after
 * 250 ms and fails open.
 */
export type RedisRole = 'producer' | 'probe' | 'worker' | 'limiter';

export type RedisEnv = Pick<Env, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_MASTER'>;

const ROLE: Record<RedisRole, RedisOptions> = {
  producer: { maxRetriesPerRequest: 1, enableOfflineQueue: false },
  probe: { maxRetriesPerRequest: 1, enableOfflineQueue: false },
  worker: { maxRetriesPerRequest: null, enableOfflineQueue: true },
  limiter: { maxRetriesPerRequest: 0, enableOfflineQueue: false, commandTimeout: 250, connectTimeout: 1000, enableAutoPipelining: true },
};

const retryStrategy = (times: number) => Math.min(times * 200, 2000);

/**
 * A master demoted under a connection (a failover that did not close it) answers writes with
 * READONLY: reconnect — through the Sentinels, to the master of now — and send the command again.
 */
const reconnectOnError = (err: Error) => (err.message.startsWith('READONLY') ? 2 : false);

/**
 * Every Redis connection of the process is made here, from the configuration: REDIS_CLUSTER_NODES
 * (ioredis' Cluster: it learns the slots from the seeds and follows MOVED, ASK and promotions),
 * REDIS_SENTINELS with REDIS_SENTINEL_MASTER (it asks the Sentinels for the master on every
 * connect, and drops the connection when they announce a new one), else REDIS_URL.
 */
export function redisConnection(env: RedisEnv, role: RedisRole): RedisClient {
  const options: RedisOptions = { connectTimeout: 2000, reconnectOnError, ...ROLE[role] };
  let client: RedisClient;
  if (env.REDIS_CLUSTER_NODES) {
    // The cluster reconnects as a whole (clusterRetryStrategy); its nodes take the rest.
    const { enableOfflineQueue, enableAutoPipelining, ...redisOptions } = options;
    client = new Cluster(env.REDIS_CLUSTER_NODES, {
      enableOfflineQueue,
      enableAutoPipelining,
      clusterRetryStrategy: retryStrategy,
      slotsRefreshTimeout: 2000,
      redisOptions,
    });
    connectUntilReady(client);
  } else if (env.REDIS_SENTINELS) {
    client = new Redis({ ...options, retryStrategy, sentinels: env.REDIS_SENTINELS, name: env.REDIS_SENTINEL_MASTER, failoverDetector: true, sentinelRetryStrategy: retryStrategy });
  } else {
    client = new Redis(env.REDIS_URL, { ...options, retryStrategy });
  }
  // Errors are reported through health and job failures; an unhandled 'error' event would crash.
  client.on('error', () => undefined);
  keepConnected(client);
  return client;
}

/** How long a connection that ioredis gave up on waits before it is made again. */
export const REVIVE_MS = 1000;

/**
 * A connection ends only when this process closes it (`disconnect()`). ioredis also ends one for
 * good on its own: when its connector is dropped while a reconnect is still asking the Sentinels
 * for the master — which is what the Sentinel failover detector does on `+switch-master` — the
 * reconnect fails `Connection is closed.` and the client stays `end`: every command fails from then
 * on, and the api's scheduling, rate limit and credential throttle with it (seen on two api
 * processes of three after a failover). Such an end is undone: the connection is made again.
 */
function keepConnected(client: RedisClient): void {
  let closing = false;
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    if (!reconnect) closing = true;
    disconnect(reconnect);
  };
  // Connected again by its owner (BullMQ resets a worker's blocking connection so): kept again.
  const connect = client.connect.bind(client);
  client.connect = () => {
    closing = false;
    return connect();
  };
  client.on('end', () => {
    if (closing) return;
    setTimeout(() => {
      if (!closing && client.status === 'end') client.connect().catch(() => undefined);
    }, REVIVE_MS).unref();
  });
}

/**
 * A cluster's `connect()` settles: it resolves once the cluster is ready and rejects if it ends.
 * ioredis leaves the promise pending for good when its ready check fails (CLUSTER INFO answered
 * `cluster_state:fail`, or sent to a master that was just killed): it reconnects on its own, but
 * never tells the caller. BullMQ awaits that promise when it resets a worker's blocking connection
 * (after a blocking wait outlived its watchdog, as during a failover): that queue's worker then
 * fetched nothing ever again while health said up — its delayed jobs piled up until the sweeper
 * found the orders.
 */
function connectUntilReady(cluster: Cluster): Cluster {
  // BullMQ's blocking connection is a duplicate of the one it is given: it settles too.
  const duplicate = cluster.duplicate.bind(cluster);
  cluster.duplicate = (...args: Parameters<Cluster['duplicate']>) => connectUntilReady(duplicate(...args));
  const connect = cluster.connect.bind(cluster);
  cluster.connect = () =>
    new Promise<void>((resolve, reject) => {
      const done = () => {
        cluster.off('ready', ready);
        cluster.off('end', ended);
      };
      const ready = () => {
        done();
        resolve();
      };
      const ended = () => {
        done();
        reject(new Error('Connection is closed.'));
      };
      cluster.once('ready', ready);
      cluster.once('end', ended);
      connect().then(ready, (err: unknown) => {
        done();
        reject(err as Error);
      });
    });
  return cluster;
}

/**
 * A queue's BullMQ key prefix. On a cluster each queue gets a hash tag of its own (`{tcc:refunds}`),
 * BullMQ's documented way: every key of one queue shares a slot, so its multi-key scripts run,
 * and different queues may live on different masters. Elsewhere the prefix is QUEUE_PREFIX, so a
 * single Redis (or a Sentinel group) keeps the keys it always had.
 */
export function queuePrefix(env: Pick<Env, 'QUEUE_PREFIX' | 'REDIS_CLUSTER_NODES'>, queue: string): string {
  return env.REDIS_CLUSTER_NODES ? `{${env.QUEUE_PREFIX}:${queue}}` : env.QUEUE_PREFIX;
}

/**
 * A Redis setting that cannot work, seen at start-up: REDIS_URL naming a cluster node or a
 * Sentinel, seeds that are not cluster nodes, Sentinels that are none or know no such master.
 * Undefined when the setting fits, or when nothing answers within 2 s (Redis away at start-up
 * only delays the work that needs it; it does not stop the service).
 */
export async function redisMisconfiguration(env: RedisEnv): Promise<string | undefined> {
  const target: { name: string; at: HostPort | string; expect: string } = env.REDIS_CLUSTER_NODES
    ? { name: 'REDIS_CLUSTER_NODES', at: env.REDIS_CLUSTER_NODES[0], expect: 'cluster' }
    : env.REDIS_SENTINELS
      ? { name: 'REDIS_SENTINELS', at: env.REDIS_SENTINELS[0], expect: 'sentinel' }
      : { name: 'REDIS_URL', at: env.REDIS_URL, expect: 'standalone' };
  const options: RedisOptions = { lazyConnect: true, connectTimeout: 2000, commandTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null };
  const redis = typeof target.at === 'string' ? new Redis(target.at, options) : new Redis({ ...options, host: target.at.host, port: target.at.port });
  redis.on('error', () => undefined);
  // REDIS_URL may carry a password: it is named, never shown.
  const where = typeof target.at === 'string' ? '' : ` (${target.at.host}:${target.at.port})`;
  try {
    await redis.connect();
    const mode = /^redis_mode:(\w+)/m.exec(await redis.info('server'))?.[1] ?? 'standalone';
    if (mode !== target.expect) {
      if (mode === 'cluster') return `${target.name} names a Redis Cluster node${where}: set REDIS_CLUSTER_NODES to the cluster's nodes instead`;
      if (mode === 'sentinel') return `${target.name} names a Redis Sentinel${where}: set REDIS_SENTINELS and REDIS_SENTINEL_MASTER instead`;
      return `${target.name} names a Redis server in ${mode} mode${where}, not ${target.expect === 'cluster' ? 'a cluster node' : 'a Sentinel'}`;
    }
    if (target.expect === 'sentinel' && !(await redis.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', env.REDIS_SENTINEL_MASTER!))) {
      return `REDIS_SENTINEL_MASTER: the Sentinel${where} knows no master named ${env.REDIS_SENTINEL_MASTER}`;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}
