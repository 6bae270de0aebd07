import { REDIS_URL } from '../env.js';
import { makeRoot, removeRoot } from './engines.js';
import { Pooler, startPgBouncer } from './pgbouncer.js';
import { PostgresServer, startPrimary, startReplica } from './postgres.js';

export type { Pooler, PostgresServer };

/**
 * One part of the topology the service connects to: the environment a service process gets for
 * it, and how to take it down. Postgres (primary, replica, pooler) is one such part; Redis is
 * another — the suite's own Redis here, and a Redis Cluster or a Sentinel group started the same
 * way (engines.ts) fits the same shape.
 */
export interface TopologyPart {
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface PostgresTopology extends TopologyPart {
  primary: PostgresServer;
  replica: PostgresServer;
  pooler: Pooler;
  database: string;
}

/**
 * A private PostgreSQL 15 primary with `database`, a streaming replica of it and PgBouncer 1.18 in
 * transaction mode in front of the primary. A service process gets DATABASE_URL through the
 * pooler, DATABASE_DIRECT_URL to the primary and DATABASE_READ_URL on the replica.
 */
export async function startPostgresTopology(root: string, database: string): Promise<PostgresTopology> {
  const primary = await startPrimary(root, [database]);
  const [replica, pooler] = await Promise.allSettled([startReplica(root, primary), startPgBouncer(root, primary)]);
  if (replica.status === 'rejected' || pooler.status === 'rejected') {
    await Promise.allSettled([replica, pooler].flatMap((p) => (p.status === 'fulfilled' ? [p.value.stop()] : [])).concat(primary.stop()));
    throw replica.status === 'rejected' ? replica.reason : (pooler as PromiseRejectedResult).reason;
  }
  return {
    primary,
    replica: replica.value,
    pooler: pooler.value,
    database,
    env: { DATABASE_URL: pooler.value.url(database), DATABASE_DIRECT_URL: primary.url(database), DATABASE_READ_URL: replica.value.url(database) },
    stop: async () => {
      await Promise.all([pooler.value.stop(), replica.value.stop()]);
      await primary.stop();
    },
  };
}

/** The suite's own Redis (TEST_REDIS_URL); queues kept apart by QUEUE_PREFIX. */
export function suiteRedis(): TopologyPart {
  return { env: { REDIS_URL }, stop: async () => undefined };
}

export interface Topology {
  root: string;
  postgres: PostgresTopology;
  redis: TopologyPart;
  /** Every part's environment, for a service process. */
  env: Record<string, string>;
  /** Stops every engine by its pid and removes their files. */
  stop(): Promise<void>;
}

export async function startTopology(name: string, database: string): Promise<Topology> {
  const root = makeRoot(name);
  const stops: (() => Promise<void>)[] = [];
  try {
    const postgres = await startPostgresTopology(root, database);
    stops.push(postgres.stop);
    const redis = suiteRedis();
    stops.push(redis.stop);
    return {
      root,
      postgres,
      redis,
      env: { ...postgres.env, ...redis.env },
      stop: async () => {
        await Promise.allSettled(stops.map((s) => s()));
        removeRoot(root);
      },
    };
  } catch (err) {
    await Promise.allSettled(stops.map((s) => s()));
    removeRoot(root);
    throw err;
  }
}
