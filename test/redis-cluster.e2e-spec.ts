import { spawnSync } from 'node:child_process';
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
