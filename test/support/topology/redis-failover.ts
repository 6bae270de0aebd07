import { createTestDatabase, TestDatabase } from '../database.js';
import { client } from '../http.js';
import { startReceiver, Receiver } from '../receiver.js';
import { queuePrefix, ServiceProcess, startService } from '../service.js';
import { SimulatorHandle, startSimulator } from '../simulator.js';
import { checkoutLoad, invariantBreaks, LoadResult, ordersByStatus, overdueOrders, settle, stockSnapshot } from './checkout-load.js';
import { HealthChange, linesWith, watchHealth } from './health-watch.js';

/** A Redis deployment the service is pointed at: its environment, and a master to lose. */
export interface RedisTopology {
  /** What an operator sets (REDIS_CLUSTER_NODES…, REDIS_SENTINELS…), and REDIS_URL naming one of its nodes. */
  env: Record<string, string>;
  /** Kills the master serving the queue `queue` of the deployment prefixed `prefix` (when it can tell), waits for its replica's promotion. */
  killMaster(prefix: string, queue: string): Promise<{ promoted: number; failoverMs: number }>;
}

export interface FailoverReport {
  load: LoadResult;
  health: HealthChange[];
  /** ms from the start of the health watch: the kill, and the promotion seen by the topology. */
  killedAt: number;
  failoverMs: number;
  /** ms from the kill until every process said Redis is up again (undefined: never). */
  healthyAfterKillMs?: number;
  /**
   * Orders overdue by more than 3 s with only the queues working (no sweeper yet), after the load:
   * those whose job was to be enqueued or taken while the failover ran (due from the kill until a
   * TTL after the promotion plus 2 s for the clients to learn it, or after every process is healthy
   * again if later), and the others, which only a queue that does not work would leave.
   */
  overdueWithoutSweeper: { duringFailover: number; outsideFailover: { id: string; dueAt: number; afterKillMs: number }[] };
  /** Orders still holding once a sweeper ran too. */
  open: string[];
  breaks: unknown[];
  byStatus: Record<string, number>;
  /** `worker error` lines of the worker, and how many failures they counted in all. */
  workerErrorLines: number;
  workerErrorsCounted: number;
  /** The first of them, as logged. */
  firstWorkerError?: string;
  /** Lines of every process saying a job could not be enqueued (the sweeper's part), and the lines of all processes. */
  enqueueWarnings: number;
  logLines: number;
  /** What the queue dashboard's API and /metrics' `tcc_queue_jobs` show of the queues at the end. */
  dashboardQueues: string[];
  gaugedQueues: string[];
  /** /metrics' `tcc_queue_overdue_seconds` per queue at the end, rounded (read from the cluster or through Sentinel like the rest). */
  queueOverdueS: Record<string, number>;
  /** Processes that exited on their own. */
  died: string[];
  /** Webhook deliveries not delivered at the end. */
  undelivered: number;
  seconds: number;
}

const QUEUES = ['confirm-retry', 'reservation-expiry', 'refunds', 'webhooks'];
const TTL_MS = 2000;
const ENV = {
  PAYMENT_TIMEOUT_MS: '300',
  RESERVATION_TTL_MS: String(TTL_MS),
  CONFIRM_RETRY_BASE_MS: '100',
  CONFIRM_MAX_ATTEMPTS: '4',
  BREAKER_VOLUME_THRESHOLD: '20',
  BREAKER_RESET_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_BASE_MS: '200',
  DB_POOL_SIZE: '8',
  LOG_REQUESTS: 'errors',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The service on a Redis topology under a checkout load with gateway faults and 2 s TTLs: two api
 * processes (one on the fast path, one with the rate limit on, so both use Redis) and a worker
 * whose sweeper is held off, so only the queues resolve what falls due. `killAt` ms into the load
 * the master serving the reservation-expiry queue is killed and its replica promoted. After the
 * load: how much the queues left overdue, then a second worker with a sweeper, and the checks.
 */
export async function runRedisFailover(topology: RedisTopology, opts: { loadMs: number; killAt: number }): Promise<FailoverReport> {
  const began = Date.now();
  const prefix = queuePrefix();
  let db: TestDatabase | undefined;
  let sim: SimulatorHandle | undefined;
  let receiver: Receiver | undefined;
  const procs: { name: string; proc: ServiceProcess }[] = [];
  try {
    [db, sim, receiver] = await Promise.all([createTestDatabase(), startSimulator(), startReceiver()]);
    const base = { ...ENV, ...topology.env, DATABASE_URL: db.url, PAYMENT_GATEWAY_URL: sim.url, QUEUE_PREFIX: prefix };
    // One after the other (three cold starts at once on a busy machine outlast the harness's 20 s),
    // each kept as soon as it runs, so that one failing to start leaves none behind.
    const run = async (name: string, env: Record<string, string>) => {
      const proc = await startService({ ...base, ...env });
      procs.push({ name, proc });
      return proc;
    };
    const worker = await run('worker', { ROLE: 'worker', OPS_PORT: '0', SWEEP_INTERVAL_MS: '600000' });
    const fast = await run('api', { ROLE: 'api' });
    const limited = await run('api-limited', { ROLE: 'api', RATE_LIMIT_PER_MINUTE: '1000000' });
    const opsPort = worker.logs.map((l) => /"opsPort":(\d+)/.exec(l)?.[1]).find(Boolean);
    const api = client(fast.url);
    const skus = Array.from({ length: 4 }, (_, i) => `REDIS-${i}-${prefix}`);
    for (const sku of skus) if ((await api.putSku(sku, 5000, 700)).status !== 200) throw new Error(`cannot stock ${sku}`);
    const hook = await api.admin('PUT', '/admin/webhooks/topology', { url: receiver.url, events: ['order.confirmed', 'order.canceled', 'refund.succeeded'], secret: receiver.secret });
    if (hook.status !== 200) throw new Error(`cannot register the webhook: ${hook.status}`);
    const start = await stockSnapshot(db, skus);
    await sim.setFaults({ latencyMs: 30, errorRate: 0.08, rateLimitRate: 0.03, declineRate: 0.03, hangMs: 700 });

    const watch = watchHealth([
      { name: 'worker', url: `http://127.0.0.1:${opsPort}` },
      { name: 'api', url: fast.url },
      { name: 'api-limited', url: limited.url },
    ]);
    let killedAt = 0;
    let killedEpoch = 0;
    let failoverMs = 0;
    const kill = (async () => {
      await sleep(opts.killAt);
      killedAt = watch.now();
      killedEpoch = Date.now();
      ({ failoverMs } = await topology.killMaster(prefix, 'reservation-expiry'));
    })();
    const [load] = await Promise.all([checkoutLoad({ apis: [fast.url, limited.url], skus, until: Date.now() + opts.loadMs, shoppers: 6, sim }), kill]);

    // Quiet: the queues alone (the worker's sweeper is held off) get what falls due.
    await sim.setFaults({ latencyMs: 0, errorRate: 0, rateLimitRate: 0, declineRate: 0 });
    await sim.script([]);
    await sleep(8000);
    const overdue = await overdueOrders(db, 3000);
    const health = await watch.stop();
    const healthy = (name: string) => health.find((c) => c.name === name && c.at > killedAt && c.status === 200 && c.redis === 'up' && !health.some((d) => d.name === name && d.at > c.at && d.redis !== 'up'));
    const back = procs.map((p) => healthy(p.name)?.at);
    const healthyAfterKillMs = back.every((at) => at !== undefined) ? Math.max(...(back as number[])) - killedAt : undefined;
    // The failover, as the processes live it: from the kill until the promotion plus 2 s, or until
    // every process says Redis is up again if that is later (a job taken while the worker's commands
    // still failed may stay active until its lock runs out: the sweeper's part), plus a TTL.
    const failoverEnd = killedEpoch + Math.max(failoverMs + 2000, healthyAfterKillMs ?? 0) + TTL_MS;
    const failoverWindow = (at: number) => at >= killedEpoch && at <= failoverEnd;
    const overdueWithoutSweeper = { duringFailover: overdue.filter((o) => failoverWindow(o.dueAt)).length, outsideFailover: overdue.filter((o) => !failoverWindow(o.dueAt)).map((o) => ({ ...o, afterKillMs: o.dueAt - killedEpoch })) };

    // What a lost job leaves is found again from Postgres.
    await run('sweeper', { ROLE: 'worker', SWEEP_INTERVAL_MS: '300' });
    const open = await settle(db, 30_000);
    const breaks = open.length ? [] : await invariantBreaks(db, sim, skus, start);
    let undelivered = -1;
    for (let i = 0; i < 40 && undelivered !== 0; i++) {
      undelivered = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'`))[0].n;
      if (undelivered) await sleep(250);
    }
    const errorLines = linesWith(worker.logs, 'worker error');
    const board = await api.admin('GET', '/admin/queues/api/queues');
    const metrics = String((await api.get('/metrics')).body);
    const gaugedQueues = [...new Set([...metrics.matchAll(/^tcc_queue_jobs\{queue="([^"]+)",state="waiting"\} \d+$/gm)].map((m) => m[1]))].sort();
    // How long each queue's earliest due job has waited for a worker at the end (a stalled fetch loop shows here).
    const queueOverdueS = Object.fromEntries([...metrics.matchAll(/^tcc_queue_overdue_seconds\{queue="([^"]+)"\} (\S+)$/gm)].map((m) => [m[1], Math.round(Number(m[2]))]));
    return {
      load,
      health,
      killedAt,
      failoverMs,
      healthyAfterKillMs,
      overdueWithoutSweeper,
      open,
      breaks,
      byStatus: await ordersByStatus(db),
      workerErrorLines: errorLines.length,
      workerErrorsCounted: errorLines.reduce((n, l) => n + Number(/"failures":(\d+)/.exec(l)?.[1] ?? 1), 0),
      firstWorkerError: errorLines[0]?.slice(0, 400),
      enqueueWarnings: procs.flatMap((p) => p.proc.logs).filter((l) => /not scheduled|could not schedule|jobs not enqueued/.test(l)).length,
      logLines: procs.reduce((n, p) => n + p.proc.logs.length, 0),
      dashboardQueues: board.status === 200 ? (board.body.queues as { name: string }[]).map((q) => q.name).sort() : [`HTTP ${board.status}`],
      gaugedQueues,
      queueOverdueS,
      died: procs.filter((p) => p.proc.proc.exitCode !== null || p.proc.proc.signalCode !== null).map((p) => `${p.name}: ${p.proc.logs.slice(-5).join(' | ')}`),
      undelivered,
      seconds: Math.round((Date.now() - began) / 1000),
    };
  } finally {
    await Promise.all(procs.map((p) => p.proc.stop()));
    await Promise.all([sim?.close(), receiver?.close()]);
    await db?.drop();
  }
}


/**
 * What every Redis topology must show after its master was killed mid-load (the report printed
 * first, under `label`): no process died, no 5xx but 503, health up before the kill, the worker
 * degraded with a reason after it and every process up again; nothing overdue outside the failover
 * with only the queues working; every order final and every invariant; every webhook delivered;
 * the dashboard and the gauge reading every queue; worker errors logged at most once per queue
 * and 10 s.
 */
export function expectFollowedFailover(report: FailoverReport, label: string): void {
  process.stdout.write(`${label}: ${JSON.stringify({ ...report, overdueWithoutSweeper: { duringFailover: report.overdueWithoutSweeper.duringFailover, outsideFailover: report.overdueWithoutSweeper.outsideFailover.length }, health: report.health.map((c) => `${c.at} ${c.name} ${c.status} ${c.redis}${c.reason ? ` (${c.reason})` : ''}`) })}\n`);
  expect(report.died).toEqual([]);
  expect(report.load.unanswered).toBe(0);
  expect(Object.keys(report.load.statuses).filter((s) => Number(s) >= 500 && Number(s) !== 503)).toEqual([]);
  expect(report.load.orders).toBeGreaterThan(100);
  expect(report.health.filter((c) => c.at < report.killedAt && c.redis !== 'up')).toEqual([]);
  expect(report.health.some((c) => c.at > report.killedAt && c.name === 'worker' && c.redis === 'degraded' && c.reason)).toBe(true);
  expect(report.healthyAfterKillMs).toBeDefined();
  // The queues themselves resolve what falls due: without a sweeper nothing waits more than 3 s
  // past its time but what could not be enqueued while the failover ran (the sweeper's part).
  expect(report.overdueWithoutSweeper.outsideFailover).toEqual([]);
  expect(report.open).toEqual([]);
  expect(report.breaks).toEqual([]);
  expect(report.undelivered).toBe(0);
  expect(report.dashboardQueues).toEqual([...QUEUES].sort());
  expect(report.gaugedQueues).toEqual([...QUEUES].sort());
  expect(Object.keys(report.queueOverdueS).sort()).toEqual([...QUEUES].sort());
  expect(report.workerErrorLines).toBeLessThanOrEqual(QUEUES.length * Math.ceil(report.seconds / 10));
}
