/**
 * `npm run bench`: the four workloads of a checkout peak against the service over HTTP (two
 * service processes sharing one port, the gateway simulator at 5 ms as its own process), and in
 * the same run the two ceilings — raw SQL through pgbench (bench/pgbench/*.sql: the best single
 * statement for the same storage work) and bare node:http answering a fixed 409. Load comes from
 * wrk (bench/wrk/*.lua), 64 connections. Each workload runs beside its ceiling (raw SQL just
 * before it, bare HTTP just after it) on fresh service processes. Prints each throughput, p50/p99,
 * errors, the ratio to its ceiling, peak RSS, and the CPU each answer cost (service or bare server,
 * Postgres, simulator, load generator, from /proc); exits 1 when a goal is missed.
 *
 * Env: BENCH_PG_URL (admin URL), BENCH_REDIS_URL, BENCH_SECONDS (10), BENCH_CONNECTIONS (64),
 * BENCH_PROCESSES (2), BENCH_CPU_PROF=1 (services write .cpuprofile files to bench/profiles),
 * BENCH_ONLY=spread,hot,soldout,confirm (a subset; the goals of the others are not judged).
 *
 * Compiled on its own (tsconfig.bench.json → dist-bench/): never part of the service's build or
 * image. It runs the built service (dist/) as separate processes and imports none of it.
 */
import '../dist/common/node-version.js';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 2);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'spread,hot,soldout,confirm').split(','));
const SPREAD_SKUS = 10_000;
const TOKEN = 'bench-admin-token-0123456789';
const DB = 'tcc_bench';
const RUN = randomBytes(4).toString('hex');

interface Load {
  perSec: number;
  p50: number;
  p99: number;
  errors: number;
  ok: number;
  conflict: number;
  /** CPU spent during the load, µs per answer, by who spent it (see cpuWindow). */
  cpu?: CpuPerAnswer;
}

interface CpuPerAnswer {
  /** The HTTP server under test: the service processes, or the bare node:http ones. */
  server: number;
  postgres: number;
  simulator: number;
  /** The load generator itself (wrk or pgbench). */
  driver: number;
}

interface Row {
  workload: string;
  service: Load;
  ceilingName: string;
  ceiling: Load;
  ratio: number;
  goal: string;
  met: boolean;
}

const children: ChildProcess[] = [];

function dbUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const LOG_DIR = mkdtempSync(join(tmpdir(), 'tcc-bench-logs-'));

/**
 * Starts a node process whose stdout goes to a file (as a log collector would take it: written,
 * never blocking), and resolves once the file shows the ready line. Not a pipe to this process:
 * wrk and pgbench run synchronously here, so a pipe would fill during every measured window and
 * the service's log writes would pile up in its memory instead of being written.
 */
function start(args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const logFile = join(LOG_DIR, `${args[args.length - 1].replace(/\W+/g, '-')}-${children.length}.log`);
  const out = openSync(logFile, 'w');
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', out, 'inherit'] });
  closeSync(out);
  children.push(proc);
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const poll = setInterval(() => {
      if (ready.test(readFileSync(logFile, 'utf8').slice(0, 1_000_000))) {
        clearInterval(poll);
        resolve(proc);
      } else if (Date.now() > deadline) {
        clearInterval(poll);
        reject(new Error(`${args.join(' ')} not ready in 30 s (its output: ${logFile})`));
      }
    }, 50);
    proc.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`${args.join(' ')} exited with ${code} (its output: ${logFile})`));
    });
  });
}

function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

/** Peak resident set (VmHWM) of a process, MB. */
function peakRssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0; // the process is gone: wrk's errors say so, this must not hide them
  }
}

const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100);

/**
 * utime + stime of a process in clock ticks (0 once it is gone), plus cutime + cstime: the CPU of
 * its children that ended. For Postgres this is how a backend that exits inside the window (every
 * pgbench connection does) still counts: the postmaster reaps it.
 */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]); // fields 14-17 of proc(5), counted after the comm
  } catch {
    return 0;
  }
}

/** Every PostgreSQL server process on the machine (backends, WAL writer, checkpointer…). */
function postgresPids(): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * Counts the CPU that the server processes, Postgres and the simulator spend while `load` runs;
 * `load` reports its own driver's CPU. Ticks are 10 ms, so a 10 s window at one busy core has ~1,000.
 * Postgres is every postgres process after minus every one before: a backend that ends inside
 * the window (every pgbench connection does) has moved its whole life into the postmaster's
 * reaped-children time, and its share from before the window is taken off with the "before" sum.
 */
function cpuWindow(servers: number[], simulator: number | undefined, load: () => Load & { driverTicks: number }): Load {
  const sum = (pids: number[]) => pids.reduce((t, pid) => t + cpuTicks(pid), 0);
  const pgBefore = sum(postgresPids());
  const serverBefore = sum(servers);
  const simBefore = simulator ? cpuTicks(simulator) : 0;
  const { driverTicks, ...l } = load();
  const answers = Math.max(1, l.ok + l.conflict);
  const perAnswer = (ticks: number) => (ticks * TICK_US) / answers;
  l.cpu = {
    server: perAnswer(sum(servers) - serverBefore),
    postgres: perAnswer(sum(postgresPids()) - pgBefore),
    simulator: perAnswer(simulator ? cpuTicks(simulator) - simBefore : 0),
    driver: perAnswer(driverTicks),
  };
  return l;
}

/** Runs a load generator through sh, which prints the CPU of its finished children (cutime + cstime) last. */
function timedExec(file: string, args: string[], opts: { env: NodeJS.ProcessEnv }): { out: string; driverTicks: number } {
  const out = execFileSync('sh', ['-c', '"$@"; s=$?; echo; echo "CHILD_CPU $(cut -d" " -f16,17 /proc/$$/stat)"; exit $s', 'sh', file, ...args], {
    env: opts.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  const m = /CHILD_CPU (\d+) (\d+)/.exec(out);
  return { out, driverTicks: m ? Number(m[1]) + Number(m[2]) : 0 };
}

function progress(what: string): void {
  process.stderr.write(`bench: ${what}\n`);
}

function wrk(script: string, url: string, env: Record<string, string>, seconds: number): Load & { driverTicks: number } {
  progress(`wrk ${script} ${JSON.stringify(env)} for ${seconds} s`);
  const { out, driverTicks } = timedExec('wrk', ['-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], {
    env: { ...process.env, BENCH_RUN: `${RUN}-${randomBytes(3).toString('hex')}`, ...env },
  });
  const line = out.split('\n').find((l) => l.startsWith('BENCH '));
  if (!line) throw new Error(`wrk printed no result:\n${out}`);
  const r = JSON.parse(line.slice(6)) as { requests: number; durationUs: number; ok: number; conflict: number; other: number; socketErrors: number; p50: number; p99: number };
  const secs = r.durationUs / 1e6;
  return { perSec: (r.ok + r.conflict) / secs, p50: r.p50, p99: r.p99, errors: r.other + r.socketErrors, ok: r.ok, conflict: r.conflict, driverTicks };
}

/** A 2 s warm-up of the HTTP servers, then the measured window with the CPU they (and the simulator) spend in it. */
function underLoad(servers: ChildProcess[], url: string, script: string, env: Record<string, string>, simulatorPid: number | undefined): Load {
  wrk(script, url, env, 2);
  return cpuWindow(
    servers.map((p) => p.pid!),
    simulatorPid,
    () => wrk(script, url, env, SECONDS),
  );
}

function pgbench(script: string, vars: Record<string, string>, seconds: number): Load & { driverTicks: number } {
  progress(`pgbench ${script} ${JSON.stringify(vars)} for ${seconds} s`);
  const dir = mkdtempSync(join(tmpdir(), 'pgbench-'));
  try {
    const u = new URL(dbUrl(DB));
    const args = ['-n', '-M', 'prepared', '-c', String(CONNECTIONS), '-j', '2', '-T', String(seconds), '-f', script, '-l', `--log-prefix=${join(dir, 'log')}`];
    for (const [k, v] of Object.entries(vars)) args.push('-D', `${k}=${v}`);
    args.push('-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres'), DB);
    // Triggers off for the ceiling: it measures the bare storage work, not this schema's bookkeeping.
    const { out, driverTicks } = timedExec('pgbench', args, { env: { ...process.env, PGOPTIONS: '-c session_replication_role=replica' } });
    const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? 0);
    const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
    const latencies: number[] = [];
    for (const f of readdirSync(dir)) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        const us = Number(line.split(' ')[2]);
        if (Number.isFinite(us) && line) latencies.push(us / 1000);
      }
    }
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
    return { perSec: tps, p50: pct(50), p99: pct(99), errors: failed, ok: latencies.length, conflict: 0, driverTicks };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function prepareDatabase(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
}

/** The schema and the SQL functions, by the same entry as `npm run migration:run` and start-up. */
async function migrate(): Promise<void> {
  execFileSync(process.execPath, ['dist/database/migrate-cli.js'], {
    env: { ...process.env, DATABASE_URL: dbUrl(DB) },
    stdio: 'ignore',
  });
}

async function seed(): Promise<void> {
  const c = new pg.Client({ connectionString: dbUrl(DB) });
  await c.connect();
  const stock = 1_000_000_000;
  await c.query(
    `INSERT INTO skus (sku, name, price_minor, currency, on_hand)
     SELECT 'SPREAD-' || g, 'spread', 1000, 'USD', $1::int FROM generate_series(1, $2::int) g
     UNION ALL SELECT 'HOT-1', 'hot', 1000, 'USD', $1::int
     UNION ALL SELECT 'PGSPREAD-' || g, 'pgbench', 1000, 'USD', $1::int FROM generate_series(1, $2::int) g
     UNION ALL SELECT 'PGHOT-1', 'pgbench hot', 1000, 'USD', $1::int
     UNION ALL SELECT 'SOLDOUT-1', 'sold out', 1000, 'USD', 0`,
    [stock, SPREAD_SKUS],
  );
  await c.query('VACUUM ANALYZE');
  await c.end();
}

function fmt(l: Load, unit: string): string {
  return `${l.perSec.toFixed(0)} ${unit}, p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, errors ${l.errors}`;
}

async function main(): Promise<void> {
  for (const tool of ['wrk', 'pgbench']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      throw new Error(`${tool} is not installed (Debian: apt-get install ${tool === 'wrk' ? 'wrk' : 'postgresql-contrib'})`);
    }
  }
  await prepareDatabase();
  await migrate();
  await seed();
  // Each workload runs right beside its ceiling: the raw-SQL one just before it, while no service
  // holds connections (they share max_connections), the bare-HTTP one just after it. The machine's
  // speed drifts by tens of percent over minutes; measured minutes apart, the ratio drifted with it.
  const raw = (script: string, vars: Record<string, string>) => cpuWindow([], undefined, () => pgbench(script, vars, SECONDS));

  const gatewayPort = await freePort();
  const simulator = await start(['dist/gateway-simulator/main.js'], { GATEWAY_PORT: String(gatewayPort), SIM_LATENCY_MS: '5' }, /listening/);
  const port = await freePort();
  const profDir = join(process.cwd(), 'bench', 'profiles');
  const prof = process.env.BENCH_CPU_PROF === '1';
  if (prof) mkdirSync(profDir, { recursive: true });
  const rss: number[] = new Array<number>(PROCESSES).fill(0);
  const url = `http://127.0.0.1:${port}`;

  /** Fresh service processes for one workload (so a profile is that workload's), stopped after it. */
  const serviceLoad = async (script: string, env: Record<string, string>): Promise<Load> => {
    const services: ChildProcess[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      const args = prof ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, 'dist/main.js'] : ['dist/main.js'];
      services.push(
        await start(
          args,
          {
            DATABASE_URL: dbUrl(DB),
            REDIS_URL,
            PAYMENT_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
            ADMIN_TOKEN: TOKEN,
            PORT: String(port),
            HTTP_REUSE_PORT: 'true',
            QUEUE_PREFIX: `bench-${RUN}`,
            RESERVATION_TTL_MS: '3600000',
            ROLE: 'all',
          },
          /listening on port/,
        ),
      );
    }
    try {
      return underLoad(services, url, script, env, simulator.pid);
    } finally {
      services.forEach((p, i) => (rss[i] = Math.max(rss[i], peakRssMb(p.pid!))));
      await Promise.all(services.map(stop));
    }
  };

  const rows: Row[] = [];
  const tryLua = 'bench/wrk/try.lua';
  const pairLua = 'bench/wrk/try-confirm.lua';
  if (ONLY.has('spread')) {
    const ceiling = raw('bench/pgbench/try.sql', { skus: String(SPREAD_SKUS), prefix: 'PGSPREAD-' });
    const service = await serviceLoad(tryLua, { BENCH_SKU_PREFIX: 'SPREAD-', BENCH_SKUS: String(SPREAD_SKUS) });
    const ratio = service.perSec / ceiling.perSec;
    rows.push({ workload: `Try, spread over ${SPREAD_SKUS} SKUs`, service, ceilingName: 'raw SQL, one statement per Try', ceiling, ratio, goal: '≥ 0.6, p99 ≤ 50 ms', met: ratio >= 0.6 && service.p99 <= 50 && service.errors === 0 });
  }
  if (ONLY.has('hot')) {
    const ceiling = raw('bench/pgbench/try.sql', { skus: '1', prefix: 'PGHOT-' });
    const service = await serviceLoad(tryLua, { BENCH_SKU_PREFIX: 'HOT-', BENCH_SKUS: '1' });
    const ratio = service.perSec / ceiling.perSec;
    rows.push({ workload: 'Try, one hot SKU', service, ceilingName: 'raw SQL, one statement per Try', ceiling, ratio, goal: '≥ 1.0', met: ratio >= 1.0 && service.errors === 0 });
  }
  if (ONLY.has('soldout')) {
    const soldOut = { BENCH_SKU_PREFIX: 'SOLDOUT-', BENCH_SKUS: '1' };
    const service = await serviceLoad(tryLua, soldOut);
    const barePort = await freePort();
    const bare: ChildProcess[] = [];
    let ceiling: Load;
    try {
      for (let i = 0; i < PROCESSES; i++) bare.push(await start(['dist-bench/bare-409.js'], { BENCH_PORT: String(barePort) }, /listening/));
      ceiling = underLoad(bare, `http://127.0.0.1:${barePort}`, tryLua, soldOut, undefined);
    } finally {
      await Promise.all(bare.map(stop));
    }
    const ratio = service.perSec / ceiling.perSec;
    rows.push({ workload: 'Try, sold-out SKU (409)', service, ceilingName: 'bare node:http answering a fixed 409', ceiling, ratio, goal: '≥ 0.5, p99 < 10 ms', met: ratio >= 0.5 && service.p99 < 10 && service.errors === 0 && service.ok === 0 });
  }
  if (ONLY.has('confirm')) {
    const ceiling = raw('bench/pgbench/try-confirm.sql', { skus: String(SPREAD_SKUS), prefix: 'PGSPREAD-' });
    const service = await serviceLoad(pairLua, { BENCH_SKU_PREFIX: 'SPREAD-', BENCH_SKUS: String(SPREAD_SKUS) });
    const ratio = service.perSec / ceiling.perSec;
    rows.push({ workload: 'Try + Confirm (gateway 5 ms)', service, ceilingName: 'raw SQL, try statement + confirm statement', ceiling, ratio, goal: '≥ 0.5', met: ratio >= 0.5 && service.errors === 0 });
  }

  await Promise.all(children.map(stop));
  rmSync(LOG_DIR, { recursive: true, force: true });

  const when = new Date().toISOString().slice(0, 10);
  console.log(`\n## ${when}: ${PROCESSES} service processes, ${CONNECTIONS} connections (wrk -t2), ${SECONDS} s each, gateway simulator at 5 ms, node ${process.version}\n`);
  console.log('| workload | service | ceiling in the same run | ratio | goal | met |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const unit = r.workload.startsWith('Try + Confirm') ? 'pairs/s' : r.workload.includes('409') ? 'answers/s' : 'orders/s';
    console.log(`| ${r.workload} | ${fmt(r.service, unit)} | ${r.ceilingName}: ${fmt(r.ceiling, r.ceilingName.startsWith('bare') ? 'answers/s' : 'tx/s')} | ${r.ratio.toFixed(2)} | ${r.goal} | ${r.met ? 'yes' : '**no**'} |`);
  }
  const rssMet = rss.every((m) => m < 300);
  console.log(`| peak RSS per process (highest over the workloads) | ${rss.map((m) => `${m.toFixed(0)} MB`).join(', ')} | | | < 300 MB | ${rssMet ? 'yes' : '**no**'} |`);
  console.log('\nCPU per answer (µs; pairs for Try + Confirm), from /proc over the measured window: the HTTP server (service or bare), every Postgres process, the gateway simulator, the load generator (wrk or pgbench).\n');
  console.log('| workload | run | server | Postgres | simulator | driver | total |');
  console.log('|---|---|---|---|---|---|---|');
  const cpuRow = (workload: string, who: string, c: CpuPerAnswer | undefined) => {
    if (!c) return;
    const t = c.server + c.postgres + c.simulator + c.driver;
    console.log(`| ${workload} | ${who} | ${c.server.toFixed(0)} | ${c.postgres.toFixed(0)} | ${c.simulator.toFixed(0)} | ${c.driver.toFixed(0)} | ${t.toFixed(0)} |`);
  };
  for (const r of rows) {
    cpuRow(r.workload, 'service', r.service.cpu);
    cpuRow(r.workload, r.ceilingName.startsWith('bare') ? 'bare node:http' : 'raw SQL', r.ceiling.cpu);
  }
  if (prof) console.log(`\nCPU profiles: ${profDir}`);
  const missed = rows.filter((r) => !r.met).map((r) => r.workload);
  if (!rssMet) missed.push('peak RSS');
  if (missed.length) {
    console.log(`\nGoals missed: ${missed.join('; ')}`);
    process.exitCode = 1;
  }
}

main().catch(async (err) => {
  console.error(err);
  await Promise.all(children.map(stop));
  process.exit(1);
});
