import '../common/node-version.js';
import 'reflect-metadata';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { parseEnv } from '../config/env.schema.js';
import { dataSourceOptions } from './options.js';
import { SESSION_LOCKS } from './session-lock.js';
import { applySqlFunctions } from './sql-functions.js';

/** Where the build puts the .sql files: the same paths under dist/ as under src/. */
const SQL_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Brings a database up to date (`node dist/database/migrate-cli.js`): the pending migrations
 * (schema changes), then the engine's SQL functions whose files changed (sql-functions.ts). What
 * the service does at start-up, in a process of its own so TypeORM never stays loaded in the
 * service, and what a deployment, the tests and the benchmark run as a one-shot. Several may start
 * at once against one database: a session advisory lock lets one migrate while the others wait,
 * then find nothing pending. Prints one JSON line: { migrations, sqlFunctions }.
 */
async function main(): Promise<void> {
  const env = parseEnv(process.env);
  const ds = await new DataSource(dataSourceOptions(env.DATABASE_URL, 2)).initialize();
  const runner = ds.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [SESSION_LOCKS.migrations]);
    try {
      const ran = await ds.runMigrations({ transaction: 'each' });
      const sqlFunctions = await withClient(env.DATABASE_URL, (client) => applySqlFunctions(client, SQL_ROOT));
      process.stdout.write(`${JSON.stringify({ migrations: ran.map((m) => m.name), sqlFunctions })}\n`);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [SESSION_LOCKS.migrations]);
    }
  } finally {
    await runner.release();
    await ds.destroy();
  }
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'tcc-inventory', connectionTimeoutMillis: 5000, statement_timeout: 30_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`migrations failed: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
