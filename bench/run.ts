/**
 * `npm run bench`: the five workloads of a checkout peak against the service over HTTP (two
 * service processes sharing one port, the gateway simulator at 5 ms as its own process), and in
 * the same run the two ceilings — raw SQL through pgbench (bench/pgbench/*.sql: the best single
 * statement for the same storage work) and bare node:http answering a fixed 409 — and, not judged,
 * the sold-out refusal's floor (floor-409.ts: what any implementation must do). Load comes from
 * wrk (bench/wrk/*.lua), 64 connections. Each workload runs beside its ceiling (raw SQL just
 * before it, bare HTTP just after it) on fresh service processes. Prints each throughput, p50/p99,
 * errors, the ratio to its ceiling, peak RSS, and the CPU each answer cost (service or bare server,
 * Postgres, simulator, load generator, from /proc); exits 1 when a goal is missed.
 *
 * Env: BENCH_PG_URL (admin URL), BENCH_REDIS_URL, BENCH_SECONDS (10), BENCH_CONNECTIONS (64),
 * BENCH_PROCESSES (2), BENCH_CPU_PROF=1 (services write .cpuprofile files to bench/profiles),
 * BENCH_ONLY=spread,spread3,hot,soldout,confirm,pooled,hold (a subset; the goals of the others are not judged),
 * BENCH_SPREAD3_SKUS (the spread3 workload's SKUs, each Tried once while they last; default
 * 10,000 per second of load: the ceiling's, the warm-up's and the service's).
 *
 * The `pooled` workload (pooled.ts) runs the Try and Try + Confirm loads through PgBouncer, which
 * the bench starts itself, beside the same loads direct to Postgres.
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
import { pgbouncerVersion } from './pgbouncer.js';
import { POOLED_GOAL, POOLED_LINE, pooledWorkload, PooledResult } from './pooled.js';

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 2);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'spread,spread3,hot,soldout,confirm,pooled,hold').split(','));
const SPREAD_SKUS = 10_000;
/**
 * spread3: every SKU has stock at three locations (besides its empty row at default), and each
 * Try asks for SPREAD3_QUANTITY of one SKU, the SKUs walked in turn so that each Try meets its
 * SKU's stock as seeded (see spread3Stock). Enough SKUs for the raw-SQL ceiling, the warm-up and
 * the measured window each to take fresh ones at up to 10,000 Trys a second.
 */
const SPREAD3_SKUS = Number(process.env.BENCH_SPREAD3_SKUS ?? 10_000 * (2 * SECONDS + 2));
const SPREAD3_QUANTITY = 3;
const SPREAD3_LOCATIONS = [
  { id: 'bench-north', name: 'Bench north', priority: 10 },
  { id: 'bench-east', name: 'Bench east', priority: 20 },
  { id: 'bench-south', name: 'Bench south', priority: 30 },
];
/**
 * The stock of SKU k at its three locations (in priority order) as SQL over k: one SKU in six
 * holds 1 and 1 at the first two (a line of 3 takes 1 + 1 + 1), one in six holds 2 at the first
 * (2 + 1), the others plenty at each (the whole line at the first). A third of the lines split.
 */
const spread3Stock = (k: string) => [
  `CASE ${k} % 6 WHEN 0 THEN 1 WHEN 3 THEN 2 ELSE 1000000 END`,
  `CASE ${k} % 6 WHEN 0 THEN 1 ELSE 1000000 END`,
  '1000000',
];
const WRK_THREADS = 2;
const TOKEN = 'bench-admin-token-0123456789';
const DB = 'tcc_bench';
/** The sold-out workload's floor (floor-409.ts): a row of its own, measured, never judged. */
const FLOOR = 'Try, sold-out SKU (409), its floor: node:http and one tcc_probe a batch';
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
  /** Undefined: not judged (what it is measured against did not run). */
  met: boolean | undefined;
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

/** Where bench/wrk/try-walk.lua goes on from: the first SKU index no run has taken yet. */
const walk = { next: 0 };

function wrk(script: string, url: string, env: Record<string, string>, seconds: number): Load & { driverTicks: number } {
  progress(`wrk ${script} ${JSON.stringify(env)} for ${seconds} s`);
  const { out, driverTicks } = timedExec('wrk', [`-t${WRK_THREADS}`, `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], {
    env: { ...process.env, BENCH_RUN: `${RUN}-${randomBytes(3).toString('hex')}`, ...env },
  });
  const line = out.split('\n').find((l) => l.startsWith('BENCH '));
  if (!line) throw new Error(`wrk printed no result:\n${out}`);
  const r = JSON.parse(line.slice(6)) as { requests: number; durationUs: number; ok: number; conflict: number; other: number; socketErrors: number; p50: number; p99: number; next?: number };
  if (r.next !== undefined) walk.next = Math.max(walk.next, r.next);
  const secs = r.durationUs / 1e6;
  return { perSec: (r.ok + r.conflict) / secs, p50: r.p50, p99: r.p99, errors: r.other + r.socketErrors, ok: r.ok, conflict: r.conflict, driverTicks };
}

type LoadEnv = Record<string, string> | (() => Record<string, string>);

/**
 * A 2 s warm-up of the HTTP servers, then the measured window with the CPU they (and the
 * simulator) spend in it. An env given as a function is read for each of the two (a walk goes on
 * where the warm-up stopped).
 */
function underLoad(servers: ChildProcess[], url: string, script: string, env: LoadEnv, simulatorPid: number | undefined): Load {
  const vars = () => (typeof env === 'function' ? env() : env);
  wrk(script, url, vars(), 2);
  return cpuWindow(
    servers.map((p) => p.pid!),
    simulatorPid,
    () => wrk(script, url, vars(), SECONDS),
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

/**
 * The SKUs, each with its stock at default and the opening `set` movement of it (as
 * PUT /admin/inventory/{sku} writes it), in one transaction, so the ledger's checks at commit
 * see every row balanced. With spread3, its SKUs' stock at the three locations the same way (the
 * locations exist by then: made through the API, see createLocations).
 */
async function seed(): Promise<void> {
  const c = new pg.Client({ connectionString: dbUrl(DB) });
  await c.connect();
  const stock = 1_000_000_000;
  await c.query('BEGIN');
  await c.query(
    `INSERT INTO skus (sku, name, price_minor, currency)
     SELECT 'SPREAD-' || g, 'spread', 1000, 'USD' FROM generate_series(1, $1::int) g
     UNION ALL SELECT 'HOT-1', 'hot', 1000, 'USD'
     UNION ALL SELECT 'PGSPREAD-' || g, 'pgbench', 1000, 'USD' FROM generate_series(1, $1::int) g
     UNION ALL SELECT 'PGHOT-1', 'pgbench hot', 1000, 'USD'
     UNION ALL SELECT 'SOLDOUT-1', 'sold out', 1000, 'USD'`,
    [SPREAD_SKUS],
  );
  await c.query(`INSERT INTO stock (sku, location_id, on_hand) SELECT sku, 'default', CASE WHEN sku = 'SOLDOUT-1' THEN 0 ELSE $1::int END FROM skus`, [stock]);
  if (ONLY.has('spread3')) {
    await c.query(`INSERT INTO skus (sku, name, price_minor, currency) SELECT 'SPREAD3-' || g, 'spread3', 1000, 'USD' FROM generate_series(1, $1::int) g`, [SPREAD3_SKUS]);
    await c.query(`INSERT INTO stock (sku, location_id, on_hand) SELECT 'SPREAD3-' || g, 'default', 0 FROM generate_series(1, $1::int) g`, [SPREAD3_SKUS]);
    const [first, second, third] = spread3Stock('g');
    await c.query(
      `INSERT INTO stock (sku, location_id, on_hand)
       SELECT 'SPREAD3-' || g, l.id, CASE l.pos WHEN 1 THEN ${first} WHEN 2 THEN ${second} ELSE ${third} END
         FROM generate_series(1, $1::int) g, unnest($2::text[]) WITH ORDINALITY AS l(id, pos)`,
      [SPREAD3_SKUS, SPREAD3_LOCATIONS.map((l) => l.id)],
    );
  }
  await c.query(
    `INSERT INTO stock_movements (sku, location_id, kind, delta, on_hand_after, reason, actor)
     SELECT sku, location_id, 'set', on_hand, on_hand, 'opening balance', 'system' FROM stock WHERE on_hand > 0`,
  );
  await c.query('COMMIT');
  await c.query('VACUUM ANALYZE');
  await c.end();
}

/**
 * spread3's locations, through PUT /admin/locations/{id} on a service started for it; then the
 * list must hold them in priority order after default.
 */
async function createLocations(url: string): Promise<void> {
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  for (const l of SPREAD3_LOCATIONS) {
    const res = await fetch(`${url}/admin/locations/${l.id}`, { method: 'PUT', headers, body: JSON.stringify({ name: l.name, priority: l.priority, active: true }) });
    if (res.status !== 200) throw new Error(`PUT /admin/locations/${l.id} answered ${res.status}: ${await res.text()}`);
  }
  const list = (await (await fetch(`${url}/admin/locations`, { headers })).json()) as { data: { id: string }[] };
  const ids = list.data.map((l) => l.id).join(',');
  if (ids !== ['default', ...SPREAD3_LOCATIONS.map((l) => l.id)].join(',')) throw new Error(`GET /admin/locations lists ${ids}`);
}

/** What the service's spread3 orders hold: their lines, how many split, how many over all three locations. */
async function spread3Split(): Promise<{ lines: number; split: number; three: number }> {
  const c = new pg.Client({ connectionString: dbUrl(DB) });
  await c.connect();
  try {
    const { rows } = await c.query<{ lines: number; split: number; three: number }>(
      `SELECT count(*)::int AS lines, count(*) FILTER (WHERE jsonb_array_length(line->'allocations') > 1)::int AS split,
              count(*) FILTER (WHERE jsonb_array_length(line->'allocations') = 3)::int AS three
         FROM orders o, jsonb_array_elements(o.items) AS line
        WHERE o.transaction_id NOT LIKE 'pgb-%' AND line->>'sku' LIKE 'SPREAD3-%'`,
    );
    return rows[0];
  } finally {
    await c.end();
  }
}

/** The first spread3 SKU index the raw-SQL ceiling left untouched (its walk runs like the service's). */
async function spread3Taken(): Promise<number> {
  const c = new pg.Client({ connectionString: dbUrl(DB) });
  await c.connect();
  try {
    const { rows } = await c.query<{ k: number | null }>(
      `SELECT max(substr(sku, 9)::int) AS k FROM stock WHERE location_id = $1 AND sku LIKE 'SPREAD3-%' AND reserved > 0`,
      [SPREAD3_LOCATIONS[0].id],
    );
    return rows[0].k ?? 0;
  } finally {
    await c.end();
  }
}

/**
 * After the load: every sale a Confirm made through the service is in the ledger (one `sale`
 * movement per allocation of a confirmed order), and the inventory consistency check
 * (tcc_inventory_consistency, the one behind GET /admin/inventory/consistency) finds no stock row
 * whose reserved differs from what holding orders hold there, or whose on hand differs from its
 * ledger — over every row the workloads and their ceilings touched.
 */
async function ledgerCheck(): Promise<{ allocations: number; sales: number; checked: number; mismatches: number }> {
  const c = new pg.Client({ connectionString: dbUrl(DB) });
  await c.connect();
  try {
    const sold = await c.query<{ allocations: number; sales: number }>(
      `SELECT (SELECT count(*) FROM orders o, jsonb_array_elements(o.items) AS line, jsonb_array_elements(line->'allocations') AS a
                WHERE o.status = 'CONFIRM_SUCCESS' AND o.transaction_id NOT LIKE 'pgb-%')::int AS allocations,
              (SELECT count(*) FROM stock_movements m JOIN orders o ON o.id::text = m.reference
                WHERE m.kind = 'sale' AND o.transaction_id NOT LIKE 'pgb-%')::int AS sales`,
    );
    const check = await c.query<{ checked: number; mismatches: number }>(
      `SELECT count(*)::int AS checked, count(*) FILTER (WHERE r_mismatch)::int AS mismatches FROM tcc_inventory_consistency($1::text[])`,
      [['TRY_SUCCESS', 'CONFIRM_PENDING']],
    );
    return { ...sold.rows[0], ...check.rows[0] };
  } finally {
    await c.end();
  }
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
  if (ONLY.has('pooled') && !pgbouncerVersion()) throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer), needed by the pooled workload');
  await prepareDatabase();
  await migrate();
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
  const rss: number[] = new Array<number>(Math.max(PROCESSES, ...(ONLY.has('pooled') ? POOLED_LINE : []))).fill(0);
  const url = `http://127.0.0.1:${port}`;
  const startService = (args: string[], serviceEnv: Record<string, string> = {}) =>
    start(
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
        ...serviceEnv,
      },
      /listening on port/,
    );

  if (ONLY.has('spread3')) {
    progress('creating the locations through the API');
    const seeder = await startService(['dist/main.js']);
    try {
      await createLocations(url);
    } finally {
      await stop(seeder);
    }
  }
  progress('seeding');
  await seed();

  /**
   * Fresh service processes for one workload (so a profile is that workload's), stopped after it:
   * BENCH_PROCESSES of them unless told, `serviceEnv` over their environment, `extraServerPids`
   * (PgBouncer) counted with them.
   */
  const serviceLoad = async (
    script: string,
    env: LoadEnv,
    opts: { processes?: number; serviceEnv?: Record<string, string>; extraServerPids?: number[] } = {},
  ): Promise<Load> => {
    const services: ChildProcess[] = [];
    for (let i = 0; i < (opts.processes ?? PROCESSES); i++) {
      services.push(await startService(prof ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, 'dist/main.js'] : ['dist/main.js'], opts.serviceEnv));
    }
    try {
      return underLoad([...services, ...(opts.extraServerPids ?? []).map((pid) => ({ pid }) as ChildProcess)], url, script, env, simulator.pid);
    } finally {
      services.forEach((p, i) => (rss[i] = Math.max(rss[i], peakRssMb(p.pid!))));
      await Promise.all(services.map(stop));
    }
  };

  const rows: Row[] = [];
  let holdParts: { sql: number; gateway: number } | undefined;
  const tryLua = 'bench/wrk/try.lua';
  const pairLua = 'bench/wrk/try-confirm.lua';
  if (ONLY.has('spread')) {
    const ceiling = raw('bench/pgbench/try.sql', { skus: String(SPREAD_SKUS), prefix: 'PGSPREAD-' });
    const service = await serviceLoad(tryLua, { BENCH_SKU_PREFIX: 'SPREAD-', BENCH_SKUS: String(SPREAD_SKUS) });
    const ratio = service.perSec / ceiling.perSec;
    rows.push({ workload: `Try, spread over ${SPREAD_SKUS} SKUs`, service, ceilingName: 'raw SQL, one statement per Try', ceiling, ratio, goal: '≥ 0.8, p99 ≤ 50 ms', met: ratio >= 0.8 && service.p99 <= 50 && service.errors === 0 });
  }
  let spread3Lines: { lines: number; split: number; three: number } | undefined;
  if (ONLY.has('spread3')) {
    walk.next = 0;
    const ceiling = raw('bench/pgbench/try-spread3.sql', {
      skus: String(SPREAD3_SKUS),
      prefix: 'SPREAD3-',
      q: String(SPREAD3_QUANTITY),
      start: '0',
      clients: String(CONNECTIONS),
      n: '0',
    });
    walk.next = await spread3Taken();
    const service = await serviceLoad('bench/wrk/try-walk.lua', () => ({
      BENCH_SKU_PREFIX: 'SPREAD3-',
      BENCH_SKUS: String(SPREAD3_SKUS),
      BENCH_SKU_START: String(walk.next),
      BENCH_THREADS: String(WRK_THREADS),
      BENCH_QUANTITY: String(SPREAD3_QUANTITY),
    }));
    spread3Lines = await spread3Split();
    const ratio = service.perSec / ceiling.perSec;
    const spread = rows.find((r) => r.workload.startsWith('Try, spread over'));
    const ofSpread = spread ? service.perSec / spread.service.perSec : undefined;
    rows.push({
      workload: `Try, spread3: three locations, ${SPREAD3_SKUS} SKUs walked`,
      service,
      ceilingName: 'raw SQL, one statement per Try allocating over the locations',
      ceiling,
      ratio,
      goal: ofSpread === undefined ? '≥ 0.9 × spread (not judged: spread not run)' : `≥ 0.9 × spread: **${ofSpread.toFixed(2)}**`,
      met: ofSpread === undefined ? undefined : ofSpread >= 0.9 && service.errors === 0,
    });
  }
  if (ONLY.has('hot')) {
    const ceiling = raw('bench/pgbench/try.sql', { skus: '1', prefix: 'PGHOT-' });
    const service = await serviceLoad(tryLua, { BENCH_SKU_PREFIX: 'HOT-', BENCH_SKUS: '1' });
    const ratio = service.perSec / ceiling.perSec;
    rows.push({ workload: 'Try, one hot SKU', service, ceilingName: 'raw SQL, one statement per Try', ceiling, ratio, goal: '≥ 3.0', met: ratio >= 3.0 && service.errors === 0 });
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
    rows.push({ workload: 'Try, sold-out SKU (409)', service, ceilingName: 'bare node:http answering a fixed 409', ceiling, ratio, goal: '≥ 0.6, p99 ≤ 8 ms', met: ratio >= 0.6 && service.p99 <= 8 && service.errors === 0 && service.ok === 0 });
    // The floor (floor-409.ts): what any implementation keeps of the gap, not judged.
    const floorPort = await freePort();
    const floorProcs: ChildProcess[] = [];
    let floor: Load;
    try {
      const floorEnv = { BENCH_PORT: String(floorPort), BENCH_DATABASE_URL: dbUrl(DB), BENCH_LOG: join(LOG_DIR, 'floor-access.log') };
      for (let i = 0; i < PROCESSES; i++) floorProcs.push(await start(['dist-bench/floor-409.js'], floorEnv, /listening/));
      floor = underLoad(floorProcs, `http://127.0.0.1:${floorPort}`, tryLua, soldOut, undefined);
    } finally {
      await Promise.all(floorProcs.map(stop));
    }
    rows.push({ workload: FLOOR, service: floor, ceilingName: 'bare node:http answering a fixed 409', ceiling, ratio: floor.perSec / ceiling.perSec, goal: 'none: the floor', met: undefined });
  }
  if (ONLY.has('confirm')) {
    const ceiling = raw('bench/pgbench/try-confirm.sql', { skus: String(SPREAD_SKUS), prefix: 'PGSPREAD-' });
    const service = await serviceLoad(pairLua, { BENCH_SKU_PREFIX: 'SPREAD-', BENCH_SKUS: String(SPREAD_SKUS) });
    const ratio = service.perSec / ceiling.perSec;
    rows.push({ workload: 'Try + Confirm (gateway 5 ms)', service, ceilingName: 'raw SQL, try statement + confirm statement', ceiling, ratio, goal: '≥ 0.6', met: ratio >= 0.6 && service.errors === 0 });
  }
  let pooled: PooledResult<Load> | undefined;
  if (ONLY.has('pooled')) {
    const deps = { dbUrl: dbUrl(DB), processes: PROCESSES, freePort, progress, serviceLoad };
    pooled = await pooledWorkload(deps, { try: tryLua, pair: pairLua }, { BENCH_SKU_PREFIX: 'SPREAD-', BENCH_SKUS: String(SPREAD_SKUS) });
    const direct = `the service straight to Postgres, ${PROCESSES} processes`;
    for (const [workload, service, ceiling] of [
      [`Try, spread, through PgBouncer (transaction mode), ${PROCESSES} processes`, pooled.tryPooled, pooled.tryDirect],
      [`Try + Confirm (gateway 5 ms), through PgBouncer, ${PROCESSES} processes`, pooled.pairPooled, pooled.pairDirect],
    ] as const) {
      const ratio = service.perSec / ceiling.perSec;
      rows.push({ workload, service, ceilingName: direct, ceiling, ratio, goal: `pooled / direct ≥ ${POOLED_GOAL}`, met: ratio >= POOLED_GOAL && service.errors === 0 });
    }
  }

  if (ONLY.has('hold')) {
    // Payment held at Try: the same Try + Confirm pairs, each order authorized at its Try and
    // captured at its Confirm — two gateway calls a pair instead of one. Its ceiling is the same
    // raw SQL plus the gateway's own calls (authorize + capture, straight at the simulator): a pair
    // costs both, so the pairs a second they allow together are 1 / (1/sql + 1/gateway).
    const sql = raw('bench/pgbench/try-confirm.sql', { skus: String(SPREAD_SKUS), prefix: 'PGSPREAD-' });
    const gateway = underLoad([], `http://127.0.0.1:${gatewayPort}`, 'bench/wrk/gateway-hold.lua', {}, simulator.pid);
    const service = await serviceLoad(pairLua, { BENCH_SKU_PREFIX: 'SPREAD-', BENCH_SKUS: String(SPREAD_SKUS), BENCH_HOLD: '1' });
    const both = 1 / (1 / sql.perSec + 1 / gateway.perSec);
    const ceiling: Load = { ...sql, perSec: both, p50: sql.p50 + gateway.p50, p99: sql.p99 + gateway.p99, errors: sql.errors + gateway.errors };
    const ratio = service.perSec / ceiling.perSec;
    holdParts = { sql: sql.perSec, gateway: gateway.perSec };
    rows.push({
      workload: 'Try with authorization + Confirm (capture; gateway 5 ms)',
      service,
      ceilingName: 'raw SQL, try statement + confirm statement, plus the gateway\'s authorize + capture',
      ceiling,
      ratio,
      goal: '≥ 0.5',
      met: ratio >= 0.5 && service.errors === 0,
    });
  }

  await Promise.all(children.map(stop));
  rmSync(LOG_DIR, { recursive: true, force: true });
  const ledger = await ledgerCheck();

  const when = new Date().toISOString().slice(0, 10);
  console.log(`\n## ${when}: ${PROCESSES} service processes, ${CONNECTIONS} connections (wrk -t2), ${SECONDS} s each, gateway simulator at 5 ms, node ${process.version}\n`);
  console.log('| workload | service | ceiling in the same run | ratio | goal | met |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const unit = r.workload.includes('+ Confirm') ? 'pairs/s' : r.workload.includes('409') ? 'answers/s' : 'orders/s';
    const ceilingUnit = r.ceilingName.startsWith('bare') ? 'answers/s' : r.ceilingName.startsWith('the service') ? unit : 'tx/s';
    console.log(`| ${r.workload} | ${fmt(r.service, unit)} | ${r.ceilingName}: ${fmt(r.ceiling, ceilingUnit)} | ${r.ratio.toFixed(2)} | ${r.goal} | ${r.met === undefined ? 'not judged' : r.met ? 'yes' : '**no**'} |`);
  }
  const rssMet = rss.every((m) => m < 250);
  console.log(`| peak RSS per process (highest over the workloads) | ${rss.map((m) => `${m.toFixed(0)} MB`).join(', ')} | | | < 250 MB | ${rssMet ? 'yes' : '**no**'} |`);
  console.log('\nCPU per answer (µs; pairs for Try + Confirm), from /proc over the measured window: the HTTP server (service or bare), every Postgres process, the gateway simulator, the load generator (wrk or pgbench).\n');
  console.log('| workload | run | server | Postgres | simulator | driver | total |');
  console.log('|---|---|---|---|---|---|---|');
  const cpuRow = (workload: string, who: string, c: CpuPerAnswer | undefined) => {
    if (!c) return;
    const t = c.server + c.postgres + c.simulator + c.driver;
    console.log(`| ${workload} | ${who} | ${c.server.toFixed(0)} | ${c.postgres.toFixed(0)} | ${c.simulator.toFixed(0)} | ${c.driver.toFixed(0)} | ${t.toFixed(0)} |`);
  };
  for (const r of rows) {
    if (r.workload === FLOOR) {
      cpuRow(r.workload, 'floor', r.service.cpu); // its ceiling is the sold-out row's, printed there
      continue;
    }
    cpuRow(r.workload, r.ceilingName.startsWith('the service') ? 'service + PgBouncer' : 'service', r.service.cpu);
    cpuRow(r.workload, r.ceilingName.startsWith('bare') ? 'bare node:http' : r.ceilingName.startsWith('the service') ? 'service, direct' : 'raw SQL', r.ceiling.cpu);
  }
  if (pooled) {
    const ratios = rows.filter((r) => r.ceilingName.startsWith('the service')).map((r) => r.ratio.toFixed(2));
    console.log(`\nPooled / direct: Try ${ratios[0]}, Try + Confirm ${ratios[1]} (goal ≥ ${POOLED_GOAL}).`);
    console.log('\n| service processes through PgBouncer | Try, spread | p50 | p99 | errors |');
    console.log('|---|---|---|---|---|');
    for (const { processes, load } of pooled.line) {
      console.log(`| ${processes} | ${load.perSec.toFixed(0)} orders/s | ${load.p50.toFixed(1)} ms | ${load.p99.toFixed(1)} ms | ${load.errors} |`);
    }
  }
  if (holdParts) {
    console.log(`\nTry with authorization + Confirm: its ceiling of ${(1 / (1 / holdParts.sql + 1 / holdParts.gateway)).toFixed(0)} pairs/s is raw SQL at ${holdParts.sql.toFixed(0)} pairs/s and the simulator at ${holdParts.gateway.toFixed(0)} authorize + capture pairs/s, one after the other.`);
  }
  if (spread3Lines) {
    const share = (n: number) => `${((100 * n) / Math.max(1, spread3Lines!.lines)).toFixed(1)} %`;
    console.log(
      `\nspread3: ${spread3Lines.lines} lines Tried through the service, ${share(spread3Lines.split)} split across locations (${share(spread3Lines.three)} across all three).`,
    );
    if (walk.next > SPREAD3_SKUS) console.log(`spread3 ran out of fresh SKUs (${walk.next} Trys walked ${SPREAD3_SKUS}): raise BENCH_SPREAD3_SKUS.`);
  }
  const ledgerMet = ledger.allocations === ledger.sales && ledger.mismatches === 0;
  console.log(
    `\nLedger: ${ledger.sales} sale movements for ${ledger.allocations} allocations of orders confirmed through the service; ` +
      `inventory consistency: ${ledger.mismatches} mismatches in ${ledger.checked} stock rows.`,
  );
  if (prof) console.log(`\nCPU profiles: ${profDir}`);
  const missed = rows.filter((r) => r.met === false).map((r) => r.workload);
  if (!rssMet) missed.push('peak RSS');
  if (!ledgerMet) missed.push('ledger and inventory consistency');
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
