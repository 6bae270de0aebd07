import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { PG_ADMIN_URL } from './support/env.js';
import { client } from './support/http.js';
import { reserve, uniqueSku, waitForStatus } from './support/orders.js';
import { deleteQueueKeys, queuePrefix, ServiceProcess, startService } from './support/service.js';

/**
 * A Postgres session killed while the service holds it between two queries (a failover, an
 * operator's pg_terminate_backend, an idle-session reaper): the holder must see a connection error
 * on its next query, never an uncaught exception that takes the process down. Periodic jobs hold a
 * session (on DATABASE_DIRECT_URL) for their advisory locks through their runs, so a worker is most
 * exposed.
 */
let db: TestDatabase;
const prefix = queuePrefix();
const running: ServiceProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  await db?.drop();
  await deleteQueueKeys(prefix);
});

/** Runs an ES module script against the built code in a process of its own; its exit code and output. */
function runScript(source: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const proc = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: resolve('.'), env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
    // 'close', not 'exit': the output can still be in the pipe when the process has exited.
    proc.once('close', (code) => done({ code, out }));
  });
}

it('a checked-out connection killed between queries: the next query answers SERVICE_UNAVAILABLE and the process lives on', async () => {
  const script = `
    import pg from 'pg';
    import { Db } from './dist/database/db.js';
    import { SessionLocks } from './dist/database/session-lock.js';
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const db = new Db({ url: process.env.URL, poolSize: 3 });
    const locks = new SessionLocks(process.env.URL);
    const admin = new pg.Client({ connectionString: process.env.URL });
    await admin.connect();

    // A session lock whose session is killed while the work runs.
    const locked = await locks.withLock(0x7cc5_0e01, async () => {
      const killed = await admin.query("SELECT pg_terminate_backend(pid) AS ok FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted", [0x7cc5_0e01]);
      await sleep(300);
      return killed.rows.length;
    });
    // The lock went with the session: it can be taken again.
    const again = await locks.withLock(0x7cc5_0e01, async () => 'again');

    // A plain checked-out client killed while idle: its next query is a connection error.
    const c = await db.connect();
    const { rows } = await c.query('SELECT pg_backend_pid() AS pid');
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    await sleep(300);
    let code;
    try { await db.on(c).one('SELECT 1'); } catch (err) { code = err.code; }
    c.release();

    const one = (await db.sql.one('SELECT 1 AS x')).x;
    console.log(JSON.stringify({ locked, again, code, one }));
    await admin.end();
    await locks.close();
    await db.close();
  `;
  const { code, out } = await runScript(script, { URL: db.url });
  expect({ code, out: out.trim().split('\n').pop() }).toEqual({ code: 0, out: JSON.stringify({ locked: 1, again: 'again', code: 'SERVICE_UNAVAILABLE', one: 1 }) });
});

it('a worker whose periodic jobs lose their sessions again and again keeps running and keeps sweeping', async () => {
  const env = { DATABASE_URL: db.url, QUEUE_PREFIX: prefix, PAYMENT_GATEWAY_URL: 'http://127.0.0.1:9', SWEEP_INTERVAL_MS: '50', RESERVATION_TTL_MS: '1500' };
  const api = await startService({ ...env, ROLE: 'api' });
  const worker = await startService({ ...env, ROLE: 'worker' });
  running.push(api, worker);
  const http = client(api.url);
  const sku = uniqueSku('CONNLOSS');
  const order = await reserve(http, sku, 1, 5);

  // Kill every session that holds an advisory lock in this database (the periodic jobs' locks), for 4 s.
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  let killed = 0;
  try {
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      const r = await admin.query(
        `SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND a.datname = $1`,
        [new URL(db.url).pathname.slice(1)],
      );
      killed += r.rowCount ?? 0;
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await admin.end();
  }
  expect(killed).toBeGreaterThan(0);
  expect({ exitCode: worker.proc.exitCode, signal: worker.proc.signalCode }).toEqual({ exitCode: null, signal: null });

  // Still sweeping: with Redis's jobs gone, the expired order is released by the sweeper.
  await deleteQueueKeys(prefix);
  const released = await waitForStatus(http, order.id, ['CANCELED'], 15_000);
  expect(released.status).toBe('CANCELED');
  expect(worker.proc.exitCode).toBeNull();
});
