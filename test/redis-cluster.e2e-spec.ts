import { spawnSync } from 'node:child_process';
import { RedisCluster, startRedisCluster } from './support/topology/redis-cluster.js';
import { QUEUE_NAMES, runRedisFailover } from './support/topology/redis-failover.js';

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
  process.stdout.write(`redis cluster: ${JSON.stringify({ ...report, overdueWithoutSweeper: { duringFailover: report.overdueWithoutSweeper.duringFailover, outsideFailover: report.overdueWithoutSweeper.outsideFailover.length }, health: report.health.map((c) => `${c.at} ${c.name} ${c.status} ${c.redis}${c.reason ? ` (${c.reason})` : ''}`) })}\n`);
  expect(report.died).toEqual([]);
  expect(report.load.unanswered).toBe(0);
  expect(Object.keys(report.load.statuses).filter((s) => Number(s) >= 500 && Number(s) !== 503)).toEqual([]);
  expect(report.load.orders).toBeGreaterThan(100);
  // Before the kill every process says Redis is up; after it the worker says degraded while its
  // commands fail, then every process is back to up.
  expect(report.health.filter((c) => c.at < report.killedAt && c.redis !== 'up')).toEqual([]);
  expect(report.health.some((c) => c.at > report.killedAt && c.name === 'worker' && c.redis === 'degraded' && c.reason)).toBe(true);
  expect(report.healthyAfterKillMs).toBeDefined();
  // The queues themselves resolve what falls due: without a sweeper nothing waits more than 3 s
  // past its time but what could not be enqueued while the failover ran (the sweeper's part).
  expect(report.overdueWithoutSweeper.outsideFailover).toEqual([]);
  expect(report.open).toEqual([]);
  expect(report.breaks).toEqual([]);
  expect(report.undelivered).toBe(0);
  // The queue dashboard and the queue gauge read every queue there.
  expect(report.dashboardQueues).toEqual([...QUEUE_NAMES].sort());
  expect(report.gaugedQueues).toEqual([...QUEUE_NAMES].sort());
  // At most one line per queue and 10 s while failing, each with its count.
  expect(report.workerErrorLines).toBeLessThanOrEqual(QUEUE_NAMES.length * Math.ceil(report.seconds / 10));
}, 120_000);

it('REDIS_URL naming a cluster node stops start-up with exit 1, naming it, rather than failing every queue command', async () => {
  const live = (await cluster.nodes()).find((n) => n.role === 'master')!;
  // Nothing else to start against: were the check to let it through, it would fail otherwise.
  const env = { PATH: process.env.PATH, REDIS_URL: `redis://127.0.0.1:${live.port}`, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', PORT: '0' };
  const run = spawnSync(process.execPath, ['dist/main.js'], { env, encoding: 'utf8', timeout: 15_000 });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('REDIS_URL names a Redis Cluster node: set REDIS_CLUSTER_NODES');
});
