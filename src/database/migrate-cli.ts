import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { parseEnv } from '../config/env.schema.js';
import { SESSION_LOCKS } from './session-lock.js';
import { dataSourceOptions } from './options.js';

/**
 * Runs pending migrations (`node dist/database/migrate-cli.js`): what the service does at start-up,
 * in a process of its own so TypeORM never stays loaded in the service, and what a deployment runs
 * as a one-shot. Several may start at once against one database: a session advisory lock lets one
 * migrate while the others wait, then find nothing pending. Prints one JSON line: { migrations }.
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
      process.stdout.write(`${JSON.stringify({ migrations: ran.map((m) => m.name) })}\n`);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [SESSION_LOCKS.migrations]);
    }
  } finally {
    await runner.release();
    await ds.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`migrations failed: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
