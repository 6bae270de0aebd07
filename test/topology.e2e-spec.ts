import { readdirSync } from 'node:fs';
import { SQL_FUNCTION_FILES } from '../src/database/sql-functions.js';
import { moneyBooks } from './support/books.js';
import type { TestDatabase } from './support/database.js';
import { waitFor } from './support/http.js';
import { client } from './support/http.js';
import { rng } from './support/rng.js';
import { deleteQueueKeys, queuePrefix, ServiceProcess, startService } from './support/service.js';
import { SimulatorHandle, startSimulator } from './support/simulator.js';
import { stockByLocation, stockDrift } from './support/stock.js';
import { freePort } from './support/topology/engines.js';
import { checkoutLoad } from './support/topology/load.js';
import { startTopology, Topology } from './support/topology/index.js';

/**
 * The service on the engines its users scale out on, started here from Debian's packages: a
 * private PostgreSQL 15 primary, a streaming replica of it, PgBouncer 1.18 in transaction mode in
 * front of the primary (only `ignore_startup_parameters` changed), each on its own free ports and
 * directory, stopped by pid. Eight api and two worker processes start at once through the pooler
 * (DATABASE_DIRECT_URL on the primary for what needs a session, DATABASE_READ_URL on the replica).
 * Then three api processes sharing one port and a worker carry a checkout load with gateway
 * faults, short reservations and replayed calls, while the pooler is restarted, the replica's
 * replay paused, the replica frozen (SIGSTOP) and stopped. After it every order is final, stock
 * and money add up, nothing answered a 5xx but 503, and the logs stayed short.
 */
const DB = 'tcc';
const LOAD_SECONDS = 24;
const SKUS = Array.from({ length: 6 }, (_, i) => `TOPO-${i}`);
const ON_HAND = 400;
const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];

let topo: Topology;
let sim: SimulatorHandle;
const prefix = queuePrefix();
const processes: ServiceProcess[] = [];
let port: number;
let env: Record<string, string>;
/** The primary, as stockDrift and stockByLocation read it. */
let primary: TestDatabase;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  topo = await startTopology('topology', DB);
  sim = await startSimulator();
  port = await freePort();
  primary = { query: (text: string, params?: unknown[]) => topo.postgres.primary.query(DB, text, params) } as TestDatabase;
  env = {
    ...topo.env,
    PAYMENT_GATEWAY_URL: sim.url,
    QUEUE_PREFIX: prefix,
    PORT: String(port),
    HTTP_REUSE_PORT: 'true',
    // 10 processes × 8 stay within PgBouncer's default max_client_conn (100).
    DB_POOL_SIZE: '8',
    RESERVATION_TTL_MS: '3000',
    PAYMENT_TIMEOUT_MS: '300',
    CONFIRM_RETRY_BASE_MS: '100',
    CONFIRM_MAX_ATTEMPTS: '3',
    SWEEP_INTERVAL_MS: '300',
    BREAKER_VOLUME_THRESHOLD: '20',
    BREAKER_RESET_TIMEOUT_MS: '1000',
    LOG_REQUESTS: 'errors',
  };
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await sim?.close();
  await topo?.stop();
  await deleteQueueKeys(prefix);
});

it('eight api and two worker processes started at once through the pooler apply each migration once and all become ready', async () => {
  const roles = [...Array.from({ length: 8 }, () => 'api'), 'worker', 'worker'];
  processes.push(...(await Promise.all(roles.map((ROLE) => startService({ ...env, ROLE }, 90_000)))));
  // Each process logs what its start-up applied: together, every migration and SQL function file once.
  const applied = processes.map((p) => JSON.parse(p.logs.find((l) => /"msg":"(listening on port|worker started)/.test(l))!) as { migrations: string[]; sqlFunctions: string[] });
  const migrations = readdirSync('dist/migrations').filter((f) => f.endsWith('.js'));
  const ran = applied.flatMap((a) => a.migrations);
  expect({ ran: ran.length, distinct: new Set(ran).size }).toEqual({ ran: migrations.length, distinct: migrations.length });
  expect(applied.flatMap((a) => a.sqlFunctions).sort()).toEqual([...SQL_FUNCTION_FILES].sort());
  expect(await topo.postgres.primary.query(DB, 'SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM typeorm_migrations')).toEqual([{ n: migrations.length, names: migrations.length }]);
  const api = client(`http://127.0.0.1:${port}`);
  await waitFor('the replica in use', async () => (await api.get('/health/ready')).body?.checks?.replica?.status === 'up');
  // Three api processes (on the shared port) and a worker carry the load.
  const rest = [...processes.filter((p) => p.url).slice(3), ...processes.filter((p) => !p.url).slice(1)];
  await Promise.all(rest.map((p) => p.stop()));
  processes.splice(0, processes.length, ...processes.filter((p) => !rest.includes(p)));
}, 120_000);

it(`through ${LOAD_SECONDS} s of checkout load, a pooler restart and a replica paused, frozen and stopped: every order final, the books right, no 5xx but 503`, async () => {
  const url = `http://127.0.0.1:${port}`;
  const api = client(url);
  for (const sku of SKUS) expect((await api.putSku(sku, ON_HAND, 700)).status).toBe(200);
  // The replica may answer up to READ_REPLICA_MAX_LAG_MS behind: the readers start once it has the SKUs.
  const onReplica = async () => (await topo.postgres.replica.query<{ n: number }>(DB, 'SELECT count(*)::int AS n FROM skus WHERE sku = ANY ($1)', [SKUS]))[0].n;
  await waitFor('the SKUs on the replica', async () => (await onReplica()) === SKUS.length);
  await sim.setFaults({ latencyMs: 20, errorRate: 0.08, rateLimitRate: 0.04, declineRate: 0.03, hangMs: 500 });
  const replicaScans = () => topo.postgres.replica.query<{ n: number }>(DB, `SELECT coalesce(sum(coalesce(idx_scan, 0) + seq_scan), 0)::int AS n FROM pg_stat_user_tables`);
  const scansBefore = (await replicaScans())[0].n;

  const start = Date.now();
  const at = (s: number) => sleep(Math.max(0, start + s * 1000 - Date.now()));
  /** /health/ready every 200 ms: its status and what it says of the replica, by the second of the run. */
  const ready: { t: number; status: number; replica?: string; reason?: string }[] = [];
  const probe = (async () => {
    while (Date.now() < start + LOAD_SECONDS * 1000) {
      const res = await api.get('/health/ready').catch(() => undefined);
      ready.push({ t: (Date.now() - start) / 1000, status: res?.status ?? 0, replica: res?.body?.checks?.replica?.status, reason: res?.body?.checks?.replica?.reason });
      await sleep(200);
    }
  })();
  const done: string[] = [];
  const events = (async () => {
    const { pooler, replica, primary: main } = topo.postgres;
    await at(4);
    await pooler.restart();
    done.push('pooler restarted');
    await at(6);
    const scansUsed = (await replicaScans())[0].n - scansBefore;
    done.push(`replica scans ${scansUsed > 0 ? 'seen' : 'none'}`);
    await replica.query(DB, 'SELECT pg_wal_replay_pause()');
    done.push('replay paused');
    // A SKU created while replay is paused: once the lag shows, its reads come from the primary.
    await sleep(300);
    expect((await api.putSku('TOPO-LATE', 5, 700)).status).toBe(200);
    await sleep(2000);
    const late = await api.get('/inventory/TOPO-LATE');
    done.push(`late SKU read ${late.status}`);
    await at(11);
    await replica.query(DB, 'SELECT pg_wal_replay_resume()');
    done.push('replay resumed');
    await at(14);
    replica.freeze();
    done.push('replica frozen');
    await at(18);
    replica.thaw();
    done.push('replica thawed');
    await at(20);
    await replica.stop();
    done.push('replica stopped');
    await at(22);
    await pooler.restart();
    done.push('pooler restarted');
    expect(await main.query(DB, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  })();
  const [load] = await Promise.all([checkoutLoad({ url, skus: SKUS, until: start + LOAD_SECONDS * 1000, shoppers: 6, readers: 2, random: rng(31) }), events, probe]);

  expect(done).toEqual([
    'pooler restarted',
    'replica scans seen',
    'replay paused',
    'late SKU read 200',
    'replay resumed',
    'replica frozen',
    'replica thawed',
    'replica stopped',
    'pooler restarted',
  ]);
  expect(load.broken).toEqual([]);
  const fiveHundreds = (s: Record<number, number>) => Object.entries(s).filter(([code]) => Number(code) >= 500 && Number(code) !== 503);
  expect(fiveHundreds(load.statuses)).toEqual([]);
  expect(fiveHundreds(load.readStatuses)).toEqual([]);
  // Ready only ever answered 200 or 503 (the pooler restarting); the replica was degraded while
  // paused, frozen and stopped, and in use before and between.
  expect(ready.filter((r) => r.status !== 200 && r.status !== 503)).toEqual([]);
  const replicaAt = (from: number, to: number) => new Set(ready.filter((r) => r.t >= from && r.t < to && r.status === 200).map((r) => r.replica));
  expect(replicaAt(0, 4)).toContain('up');
  expect(replicaAt(8, 11)).toContain('degraded');
  expect(replicaAt(12.5, 14)).toContain('up');
  expect(replicaAt(15.5, 18)).toEqual(new Set(['degraded']));
  expect(replicaAt(21.5, LOAD_SECONDS)).toEqual(new Set(['degraded']));

  // Quiet: a healthy gateway. Every order must end by itself: confirmed, or released and refunded.
  await sim.setFaults({ latencyMs: 0, errorRate: 0, rateLimitRate: 0, declineRate: 0 });
  await sim.script([]);
  await waitFor(
    'every order final',
    async () => (await primary.query(`SELECT count(*)::int AS n FROM orders WHERE status = ANY ($1)`, [HOLDING]))[0].n === 0,
    30_000,
    250,
  );
  const orders = await primary.query<{ id: string; status: string; amount_minor: string }>(`SELECT id, status, amount_minor FROM orders`);
  expect(orders.length).toBeGreaterThanOrEqual(load.orders.size);
  let books = moneyBooks(orders, await sim.ledger());
  for (let i = 0; i < 40 && books.refunding.length; i++) {
    await sleep(250);
    books = moneyBooks(orders, await sim.ledger());
  }
  expect(books).toEqual({ wrong: [], refunding: [] });
  expect(await stockDrift(primary, SKUS)).toEqual([]);
  for (const s of await stockByLocation(primary, SKUS)) expect(s).toEqual({ ...s, on_hand: ON_HAND - s.sold, reserved: 0 });
  expect(await primary.query(`SELECT * FROM tcc_inventory_consistency($1::text[]) WHERE r_mismatch`, [HOLDING])).toEqual([]);
  const byStatus = orders.reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }), {});
  expect(byStatus.CONFIRM_SUCCESS ?? 0).toBeGreaterThan(0);
  expect((byStatus.CANCELED ?? 0) + (byStatus.PAY_FAILED ?? 0)).toBeGreaterThan(0);
  expect(load.replays).toBeGreaterThan(0);

  // No process died, and none wrote a line per failure: a few hundred lines each at most.
  expect(processes.filter((p) => p.proc.exitCode !== null || p.proc.signalCode !== null)).toEqual([]);
  const lines = processes.map((p) => p.logs.length);
  process.stdout.write(`topology: ${JSON.stringify({ events: done, orders: byStatus, replays: load.replays, http: load.statuses, reads: load.readStatuses, logLines: lines })}\n`);
  expect(Math.max(...lines)).toBeLessThan(400);
}, 150_000);
