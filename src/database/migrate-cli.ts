import '../common/node-version.js';
import 'reflect-metadata';
import type pg from 'pg';
import { DataSource, MigrationExecutor, type QueryRunner } from 'typeorm';
import { parseEnv } from '../config/env.schema.js';
import { dataSourceOptions } from './options.js';
import { SESSION_LOCKS } from './session-lock.js';
import { applySqlFunctions, SQL_ROOT } from './sql-functions.js';


/**
 * Brings a database up to date (`node dist/database/migrate-cli.js`): the pending migrations
 * (schema changes), then the engine's SQL functions whose files changed (sql-functions.ts). What
 * the service does at start-up, in a process of its own so TypeORM never stays loaded in the
 * service, and what a deployment, the tests and the benchmark run as a one-shot. Prints one JSON
 * line: { migrations, sqlFunctions }.
 *
 * Everything runs on one server session of DATABASE_DIRECT_URL (a pooler in transaction mode
 * keeps no session): a session advisory lock lets one process migrate while the others wait, then
 * find nothing pending (takeMigrationsLock). Once the lock is held each statement has
 * MIGRATION_STATEMENT_TIMEOUT_MS (30 s; not the wait for the lock).
 */
async function main(): Promise<void> {
  const env = parseEnv(process.env);
  const ds = await new DataSource(dataSourceOptions(env.DATABASE_DIRECT_URL, 1)).initialize();
  const runner = ds.createQueryRunner();
  try {
    const session = (await runner.connect()) as pg.PoolClient;
    await takeMigrationsLock(runner);
    try {
      await runner.query(`SET statement_timeout = ${env.MIGRATION_STATEMENT_TIMEOUT_MS}`);
      const migrations = new MigrationExecutor(ds, runner);
      migrations.transaction = 'each';
      const ran = await migrations.executePendingMigrations();
      const sqlFunctions = await applySqlFunctions(session, SQL_ROOT);
      process.stdout.write(`${JSON.stringify({ migrations: ran.map((m) => m.name), sqlFunctions })}\n`);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [SESSION_LOCKS.migrations]);
    }
  } finally {
    await runner.release();
    await ds.destroy();
  }
}

/**
 * Waits for the migrations' lock by trying it again and again (every 100-250 ms), never in one
 * blocking pg_advisory_lock: a statement blocked there keeps its transaction's snapshot open, and
 * a migration that builds an index CONCURRENTLY waits for every older snapshot to end — while
 * the waiter waits for that migration's lock, a deadlock Postgres ends by failing one of them
 * (processes started together on a new database died so). Nor has the wait a time limit: the
 * processes queue behind one migrating a large database for as long as that takes.
 */
async function takeMigrationsLock(runner: QueryRunner): Promise<void> {
  for (;;) {
    const [row] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [SESSION_LOCKS.migrations])) as { locked: boolean }[];
    if (row?.locked) return;
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 150));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`migrations failed: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
