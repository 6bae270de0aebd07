import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrl, PG_ADMIN_URL, TEMPLATE_DB } from './env.js';

export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A database of its own for one test file, cloned from the migrated template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `tcc_t_${randomBytes(5).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DB}`));
  const url = databaseUrl(name);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  return {
    url,
    pool,
    query: async (text, params) => (await pool.query(text, params)).rows,
    drop: async () => {
      await pool.end();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** The backends of `db` waiting for a lock now. */
export async function lockWaiters(db: TestDatabase): Promise<number[]> {
  return (await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).map((r) => r.pid);
}

/** Resolves once backend `pid` waits for a lock; throws after 10 s. */
export async function waitingOnLock(db: TestDatabase, pid: number): Promise<void> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
    const rows = await db.query<{ w: string | null }>(`SELECT wait_event_type AS w FROM pg_stat_activity WHERE pid = $1`, [pid]);
    if (rows[0]?.w === 'Lock') return;
  }
  throw new Error(`backend ${pid} never waited for a lock`);
}

/**
 * Runs `work` in a transaction on a connection of its own to `db` — a transaction another one
 * meets mid-way (a row or a lock it holds) — committed once `work` ends, rolled back if it throws;
 * the connection closed either way.
 */
export async function inTransaction<T>(db: TestDatabase, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('BEGIN');
    const result = await work(c);
    await c.query('COMMIT');
    return result;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await c.end();
  }
}
