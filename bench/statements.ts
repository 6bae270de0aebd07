/**
 * `npm run bench:statements`: what sending the hot path's statements unnamed costs, against
 * sending them as named prepared statements (what the service did before it had to run behind a
 * transaction-mode pooler, where a named statement may meet a server connection that never saw it).
 *
 * One connection, no concurrency, every figure alternately named and unnamed in interleaved rounds
 * so that the machine's drift falls on both alike:
 *
 * - the statements alone: the hot path's four statements (tcc_try_batch, tcc_probe, tcc_claim,
 *   tcc_apply) with an empty batch, so the call does nothing but what naming changes — parsing
 *   and planning the outer SELECT, one more protocol message — over and over;
 * - with their work: Try + Confirm pairs, each statement sent as the service sends it (the Try of
 *   one order of one line, the Confirm's claim and its paid move), for the scale of a real call.
 *
 * Prints per call the wall time and the CPU the Postgres backend spent (from /proc/<pid>/schedstat:
 * the backend must run on this machine), and the difference. The service sends one call per
 * batch, so under load a call carries several Trys: per call is the most an answer can pay.
 *
 * Env: BENCH_PG_URL (admin URL, default the machine's Postgres), BENCH_STATEMENT_CALLS (3000 empty
 * calls per statement and round), BENCH_STATEMENT_PAIRS (300 pairs per round),
 * BENCH_STATEMENT_ROUNDS (4).
 */
import '../dist/common/node-version.js';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CALLS = Number(process.env.BENCH_STATEMENT_CALLS ?? 3000);
const PAIRS = Number(process.env.BENCH_STATEMENT_PAIRS ?? 300);
const ROUNDS = Number(process.env.BENCH_STATEMENT_ROUNDS ?? 4);
const DB = 'tcc_bench_statements';
const SKUS = 1000;
const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];
const TERMINAL = ['CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'];

type Statement = { name: string; text: string };
/** The service's own statements and move builder, from its build (dist/), read at run time. */
interface Service {
  tryBatch: Statement;
  probe: Statement;
  claim: Statement;
  apply: Statement;
  paidMoveJson(id: string): Record<string, unknown>;
  refundPending: string;
  /** The claim's payment arguments after HOLDING, as the Confirm batch sends them (classic orders only here). */
  claimPayment: unknown[];
}

async function service(): Promise<Service> {
  const load = (path: string) => import(new URL(`../dist/${path}`, import.meta.url).href) as Promise<Record<string, any>>;
  const [{ TRY_SQL }, { CONFIRM_SQL }, { ORDERS_SQL }, moves, { REFUND }, { PAYMENT_UNSETTLED }] = await Promise.all([
    load('orders/try/try.sql.js'),
    load('orders/confirm/confirm.sql.js'),
    load('orders/state/orders.sql.js'),
    load('orders/state/moves.js'),
    load('orders/state/refund-state.js'),
    load('orders/state/order-state.js'),
  ]);
  return {
    tryBatch: TRY_SQL.tryBatch,
    probe: TRY_SQL.probe,
    claim: CONFIRM_SQL.claim,
    apply: ORDERS_SQL.apply,
    paidMoveJson: (id) => moves.moveJson(moves.paidMove(id, 'bench', { paymentId: `pay_${id}`, addAttempts: 1, refundWatchMs: 600_000 })),
    refundPending: REFUND.pending,
    claimPayment: [PAYMENT_UNSETTLED, ['authorized'], 'capturing'],
  };
}

function dbUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** CPU time a process has spent on a CPU, ns (first field of /proc/<pid>/schedstat). */
function cpuNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

interface Cost {
  wallUs: number;
  backendUs: number;
  calls: number;
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  execFileSync(process.execPath, ['dist/database/migrate-cli.js'], { env: { ...process.env, DATABASE_URL: dbUrl(DB) }, stdio: 'ignore' });
  const svc = await service();
  const c = new pg.Client({ connectionString: dbUrl(DB) });
  await c.connect();
  await c.query('BEGIN');
  await c.query(`INSERT INTO skus (sku, name, price_minor, currency) SELECT 'S-' || g, 's', 1000, 'USD' FROM generate_series(1, $1::int) g`, [SKUS]);
  await c.query(`INSERT INTO stock (sku, location_id, on_hand) SELECT sku, 'default', 1000000000 FROM skus`);
  await c.query(`INSERT INTO stock_movements (sku, location_id, kind, delta, on_hand_after, reason, actor) SELECT sku, location_id, 'set', on_hand, on_hand, 'opening balance', 'system' FROM stock`);
  await c.query('COMMIT');
  await c.query('VACUUM ANALYZE');
  const backend = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;

  const send = (stmt: Statement, named: boolean, values: unknown[]) => c.query(named ? { name: stmt.name, text: stmt.text, values } : { text: stmt.text, values });
  const costs: Record<string, Cost> = {};
  const add = (key: string, wallNs: bigint, backendNs: number, calls: number) => {
    const e = (costs[key] ??= { wallUs: 0, backendUs: 0, calls: 0 });
    e.wallUs += Number(wallNs) / 1000;
    e.backendUs += backendNs / 1000;
    e.calls += calls;
  };

  /** PAIRS Try + Confirm pairs, each statement timed on its own. */
  const round = async (named: boolean) => {
    const mode = named ? 'named' : 'unnamed';
    for (let i = 0; i < PAIRS; i++) {
      const sku = `S-${1 + Math.floor(Math.random() * SKUS)}`;
      const timed = async (what: string, stmt: Statement, values: unknown[]) => {
        const cpu0 = cpuNs(backend);
        const t0 = process.hrtime.bigint();
        const res = await send(stmt, named, values);
        add(`${what} ${mode}`, process.hrtime.bigint() - t0, cpuNs(backend) - cpu0, 1);
        return res.rows;
      };
      const [tried] = await timed('try', svc.tryBatch, [[randomUUID()], ['h'], ['bench'], [1], [sku], [1], [], [], 'priority', 900_000, 0, HOLDING, null]);
      if (tried?.r_outcome !== 'created') throw new Error(`Try answered ${JSON.stringify(tried)}`);
      const id = JSON.parse(tried.r_body as string).id as string;
      const [claimed] = await timed('claim', svc.claim, [[id], ['tok_ok'], [false], 30_000, HOLDING, ...svc.claimPayment]);
      if (!claimed?.r_claimed) throw new Error(`claim answered ${JSON.stringify(claimed)}`);
      const [moved] = await timed('apply', svc.apply, [JSON.stringify([svc.paidMoveJson(id)]), TERMINAL, svc.refundPending]);
      if (moved?.r_status !== 'CONFIRM_SUCCESS') throw new Error(`apply answered ${JSON.stringify(moved)}`);
    }
  };

  /** The four statements with an empty batch, CALLS times each. */
  const empty: [string, Statement, unknown[]][] = [
    ['try', svc.tryBatch, [[], [], [], [], [], [], [], [], 'priority', 900_000, 0, HOLDING, null]],
    ['probe', svc.probe, [[], [], [], [], [], [], []]],
    ['claim', svc.claim, [[], [], [], 30_000, HOLDING, ...svc.claimPayment]],
    ['apply', svc.apply, ['[]', TERMINAL, svc.refundPending]],
  ];
  const alone = async (named: boolean) => {
    for (const [what, stmt, values] of empty) {
      const cpu0 = cpuNs(backend);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) await send(stmt, named, values);
      add(`alone ${what} ${named ? 'named' : 'unnamed'}`, process.hrtime.bigint() - t0, cpuNs(backend) - cpu0, CALLS);
    }
  };

  process.stderr.write(`bench: ${ROUNDS} rounds of ${CALLS} empty calls of each statement and ${PAIRS} Try + Confirm pairs, named and unnamed in turn\n`);
  // Warm-up of both: plans, caches, the functions' own plans.
  for (const named of [true, false]) {
    await alone(named);
    await round(named);
  }
  for (const k of Object.keys(costs)) delete costs[k];
  for (let r = 0; r < ROUNDS; r++) {
    for (const named of r % 2 ? [false, true] : [true, false]) {
      await alone(named);
      await round(named);
    }
  }
  await c.end();

  const per = (k: string) => ({ wall: costs[k].wallUs / costs[k].calls, backend: costs[k].backendUs / costs[k].calls });
  const header = () => {
    console.log('| statement | named: wall / backend CPU per call (µs) | unnamed: wall / backend CPU per call (µs) | unnamed − named (µs) |');
    console.log('|---|---|---|---|');
  };
  console.log(`\n## Unnamed statements, one connection, ${ROUNDS} rounds per mode, node ${process.version}\n`);
  console.log(`The statements alone (an empty batch, ${ROUNDS} × ${CALLS} calls each):\n`);
  header();
  for (const [what] of empty) {
    const n = per(`alone ${what} named`);
    const u = per(`alone ${what} unnamed`);
    console.log(`| ${what} | ${n.wall.toFixed(0)} / ${n.backend.toFixed(1)} | ${u.wall.toFixed(0)} / ${u.backend.toFixed(1)} | ${(u.wall - n.wall).toFixed(1)} / ${(u.backend - n.backend).toFixed(1)} |`);
  }
  console.log(`\nWith their work (${ROUNDS} × ${PAIRS} Try + Confirm pairs):\n`);
  header();
  const total = { named: { wall: 0, backend: 0 }, unnamed: { wall: 0, backend: 0 } };
  for (const what of ['try', 'claim', 'apply']) {
    const n = per(`${what} named`);
    const u = per(`${what} unnamed`);
    total.named.wall += n.wall;
    total.named.backend += n.backend;
    total.unnamed.wall += u.wall;
    total.unnamed.backend += u.backend;
    console.log(`| ${what} | ${n.wall.toFixed(0)} / ${n.backend.toFixed(0)} | ${u.wall.toFixed(0)} / ${u.backend.toFixed(0)} | ${(u.wall - n.wall).toFixed(1)} / ${(u.backend - n.backend).toFixed(1)} |`);
  }
  const share = (k: 'wall' | 'backend') => (100 * (total.unnamed[k] - total.named[k])) / total.named[k];
  console.log(
    `| Try + Confirm pair | ${total.named.wall.toFixed(0)} / ${total.named.backend.toFixed(0)} | ${total.unnamed.wall.toFixed(0)} / ${total.unnamed.backend.toFixed(0)} | ` +
      `${(total.unnamed.wall - total.named.wall).toFixed(1)} / ${(total.unnamed.backend - total.named.backend).toFixed(1)} (${share('wall').toFixed(1)} % / ${share('backend').toFixed(1)} %) |`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
