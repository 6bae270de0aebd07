import { spawnSync } from 'node:child_process';
import { Cluster } from 'ioredis';
import { readyWithin } from '../src/common/with-timeout.js';
import { redisConnection } from '../src/jobs/redis.js';
import { waitFor } from './support/topology/engine.js';
import { RedisCluster, startRedisCluster } from './support/topology/redis-cluster.js';
import { expectFollowedFailover, runRedisFailover } from './support/topology/redis-failover.js';

/**
 * The service on a Redis Cluster of its own (3 masters, 3 replicas, from Debian's redis-server):
 * queues, rate limit and health under a checkout load with gateway faults and short TTLs, while
 * the master serving a queue is killed and its replica promoted.
 */
let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 2000 });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

it('runs the queues on a Redis Cluster and loses no order when a master is killed mid-load', async () => {
  const report = await runRedisFailover(
    {
      env: { REDIS_URL: cluster.firstUrl, REDIS_CLUSTER_NODES: cluster.seeds },
      killMaster: async (prefix, queue) => cluster.killMaster(await cluster.masterOf(`{${prefix}:${queue}}`)),
    },
    { loadMs: 20_000, killAt: 8000 },
  );
  expectFollowedFailover(report, 'redis cluster');
}, 120_000);

it('REDIS_URL naming a cluster node stops start-up with exit 1, naming it, rather than failing every queue command', async () => {
  const live = (await cluster.nodes()).find((n) => n.role === 'master')!;
  // Nothing else to start against: were the check to let it through, it would fail otherwise.
  const env = { PATH: process.env.PATH, REDIS_URL: `redis://127.0.0.1:${live.port}`, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', PORT: '0' };
  const run = spawnSync(process.execPath, ['dist/main.js'], { env, encoding: 'utf8', timeout: 15_000 });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('REDIS_URL names a Redis Cluster node: set REDIS_CLUSTER_NODES');
});

it("a cluster connection made again while the cluster is down is ready once it is back (BullMQ makes a worker's blocking connection again so)", async () => {
  // A master killed with its replicas: its slots stay uncovered and the cluster says fail.
  const nodes = await cluster.nodes();
  const lone = nodes.find((n) => n.role === 'master' && n.slots.length)!;
  for (const replica of nodes.filter((r) => r.masterPort === lone.port)) await cluster.killNode(replica.port);
  const other = nodes.find((n) => n.port !== lone.port && n.masterPort !== lone.port)!;
  const seeds = nodes.filter((n) => n.masterPort !== lone.port).map((n) => ({ host: '127.0.0.1', port: n.port }));
  const conn = redisConnection({ REDIS_CLUSTER_NODES: seeds, REDIS_URL: cluster.firstUrl }, 'worker') as Cluster;
  // And a duplicate of it, which is what BullMQ's blocking connection is.
  const blocking = conn.duplicate();
  blocking.on('error', () => undefined);
  try {
    for (const c of [conn, blocking]) {
      await readyWithin(c, 10_000);
      expect(c.status).toBe('ready');
      await new Promise((ended) => {
        c.once('end', ended);
        c.disconnect();
      });
    }
    await cluster.killNode(lone.port);
    await waitFor('the cluster down', 20_000, async () => ((await cluster.state(other.port)) === 'fail' ? true : undefined));

    // ioredis' ready check fails while the cluster is down: it tries again on its own, and these
    // promises must follow it (left pending for good, a BullMQ worker waited on one and stopped).
    const outcome: Record<string, string | undefined> = {};
    const connecting = Object.entries({ conn, blocking }).map(([name, c]) =>
      c.connect().then(
        () => (outcome[name] = 'ready'),
        (err: Error) => (outcome[name] = `rejected: ${err.message}`),
      ),
    );
    await new Promise((r) => setTimeout(r, 3000));
    expect(outcome).toEqual({});
    await cluster.restartNode(lone.port);
    await Promise.race([Promise.all(connecting), new Promise((r) => setTimeout(r, 20_000))]);
    expect(outcome).toEqual({ conn: 'ready', blocking: 'ready' });
    // A key of its slots answers again through it.
    let key = '';
    for (let i = 0; !key; i++) {
      const slot = Number(await conn.cluster('KEYSLOT', `probe-${i}`));
      if (lone.slots.some(([a, b]) => slot >= a && slot <= b)) key = `probe-${i}`;
    }
    expect(await conn.set(key, '1')).toBe('OK');
  } finally {
    conn.disconnect();
    blocking.disconnect();
  }
}, 90_000);
