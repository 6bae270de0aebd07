import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';
import { REVIVE_MS, redisConnection } from '../src/jobs/redis.js';
import { createTestDatabase } from './support/database.js';
import { client } from './support/http.js';
import { queuePrefix, startService } from './support/service.js';
import { startSimulator } from './support/simulator.js';
import { holdingOrders } from './support/topology/checkout-load.js';
import { linesWith } from './support/topology/health-watch.js';
import { RedisSentinelGroup, startRedisSentinel } from './support/topology/redis-sentinel.js';
import { expectFollowedFailover, runRedisFailover } from './support/topology/redis-failover.js';

/**
 * The service behind Redis Sentinel (a master, two replicas and three Sentinels of its own, from
 * Debian's redis-server): queues, rate limit and health under a checkout load with gateway faults
 * and short TTLs, while the master is killed and the Sentinels promote a replica.
 */
const run = promisify(execFile);
let group: RedisSentinelGroup;

beforeAll(async () => {
  group = await startRedisSentinel({ replicas: 2, sentinels: 3, downAfterMs: 2000 });
}, 60_000);

afterAll(async () => {
  await group?.stop();
});

it('follows the new master after a Sentinel failover mid-load and loses no order', async () => {
  const report = await runRedisFailover(
    {
      env: { REDIS_URL: group.firstUrl, REDIS_SENTINELS: group.sentinels, REDIS_SENTINEL_MASTER: group.masterName },
      killMaster: () => group.killMaster(),
    },
    { loadMs: 20_000, killAt: 8000 },
  );
  expectFollowedFailover(report, 'redis sentinel');
}, 120_000);

it('follows a master demoted alive (SENTINEL FAILOVER): its queues alone still end every order on time', async () => {
  const [db, sim] = await Promise.all([createTestDatabase(), startSimulator()]);
  const svc = await startService({
    DATABASE_URL: db.url,
    PAYMENT_GATEWAY_URL: sim.url,
    QUEUE_PREFIX: queuePrefix(),
    REDIS_SENTINELS: group.sentinels,
    REDIS_SENTINEL_MASTER: group.masterName,
    RESERVATION_TTL_MS: '1500',
    SWEEP_INTERVAL_MS: '600000', // no sweeper: only the queues end the orders
    LOG_REQUESTS: 'errors',
  });
  try {
    const api = client(svc.url);
    const sku = `DEMOTED-${randomUUID().slice(0, 8)}`;
    expect((await api.putSku(sku, 10_000)).status).toBe(200);
    const statuses: number[] = [];
    let switched = { promoted: 0, failoverMs: 0 };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await Promise.all([
      (async () => {
        for (const end = Date.now() + 9000; Date.now() < end; await sleep(50)) {
          statuses.push((await api.order(randomUUID(), { customerId: 'demoted', items: [{ sku, quantity: 1 }] })).status);
        }
      })(),
      (async () => {
        await sleep(2000);
        switched = await group.failover();
      })(),
    ]);
    expect(switched.promoted).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    // Every order abandoned, before, during and after the switch, is ended by an expiry job.
    let open = await holdingOrders(db);
    for (const end = Date.now() + 10_000; open.length && Date.now() < end; await sleep(250)) open = await holdingOrders(db);
    expect(open).toEqual([]);
    const ready = await (await fetch(`${svc.url}/health/ready`)).json();
    expect(ready).toMatchObject({ status: 'ok', checks: { redis: { status: 'up' } } });
    expect(linesWith(svc.logs, 'worker error').length).toBeLessThanOrEqual(4 * 2);
    expect(svc.proc.exitCode).toBeNull();
    process.stdout.write(`redis sentinel, a master demoted: ${JSON.stringify({ ...switched, orders: statuses.length, workerErrorLines: linesWith(svc.logs, 'worker error').length })}\n`);
  } finally {
    await svc.stop();
    await sim.close();
    await db.drop();
  }
}, 60_000);

it('a Sentinel setting that cannot work stops start-up with exit 1, naming it', async () => {
  const sentinel = group.sentinels.split(',')[0];
  const master = `127.0.0.1:${await group.masterPort()}`;
  const cases: [Record<string, string>, string][] = [
    [{ REDIS_URL: `redis://${sentinel}` }, 'REDIS_URL names a Redis Sentinel: set REDIS_SENTINELS and REDIS_SENTINEL_MASTER'],
    [{ REDIS_SENTINELS: sentinel, REDIS_SENTINEL_MASTER: 'no-such-master' }, `REDIS_SENTINEL_MASTER: the Sentinel (${sentinel}) knows no master named no-such-master`],
    [{ REDIS_SENTINELS: master, REDIS_SENTINEL_MASTER: group.masterName }, `REDIS_SENTINELS names a Redis server in standalone mode (${master}), not a Sentinel`],
  ];
  // One after the other: cold starts at once on a busy machine outlast any sensible timeout.
  const runs: { code: number | null; stderr: string }[] = [];
  for (const [env] of cases) {
    // Nothing else to start against: were the check to let it through, it would fail otherwise.
    const options = { env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', PORT: '0', ...env }, timeout: 30_000 };
    runs.push(await run(process.execPath, ['dist/main.js'], options).then(() => ({ code: 0, stderr: '' }), (err: { code: number | null; stderr: string }) => ({ code: err.code, stderr: err.stderr })));
  }
  expect(runs.map((r, i) => [r.code, r.stderr.includes(cases[i][1]) ? cases[i][1] : r.stderr])).toEqual(cases.map(([, message]) => [1, message]));
}, 100_000);

it('makes a connection again that ioredis ended while it asked the Sentinels for the master', async () => {
  const sentinels = group.sentinels.split(',').map((s) => ({ host: s.split(':')[0], port: Number(s.split(':')[1]) }));
  const redis = redisConnection({ REDIS_URL: group.firstUrl, REDIS_SENTINELS: sentinels, REDIS_SENTINEL_MASTER: group.masterName }, 'producer') as Redis;
  const statusIn = async (status: string, ms: number) => {
    for (const end = Date.now() + ms; redis.status !== status && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    return redis.status;
  };
  try {
    expect(await statusIn('ready', 5000)).toBe('ready');
    const ended = new Promise((resolve) => redis.once('end', resolve));
    // What the failover detector does on +switch-master (it drops the connector), while the
    // reconnect that follows a lost connection is still asking the Sentinels for the master.
    redis.once('connecting', () => (redis as unknown as { connector: { disconnect(): void } }).connector.disconnect());
    redis.disconnect(true);
    await ended;
    // ioredis gave up on it: every command fails…
    await expect(redis.ping()).rejects.toThrow('Connection is closed.');
    // …until the connection is made again.
    expect(await statusIn('ready', REVIVE_MS + 5000)).toBe('ready');
    expect(await redis.ping()).toBe('PONG');
    // Closed by the process, it stays closed.
    redis.disconnect();
    expect(await statusIn('end', 2000)).toBe('end');
    await new Promise((r) => setTimeout(r, REVIVE_MS * 2));
    expect(redis.status).toBe('end');
  } finally {
    redis.disconnect();
  }
}, 30_000);
