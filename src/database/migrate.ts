import { DataSource } from 'typeorm';
import { dataSourceOptions } from './options.js';

const MIGRATION_LOCK = 0x7cc5_0000;

/**
 * Runs pending migrations at start-up. Several processes may start at once against one
 * database: a session advisory lock lets one migrate while the others wait, then find nothing
 * pending.
 */
export async function runPendingMigrations(databaseUrl: string): Promise<string[]> {
  const ds = await new DataSource(dataSourceOptions(databaseUrl, 2)).initialize();
  const runner = ds.createQueryRunner();
  try {
    await runner.connect();
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const ran = await ds.runMigrations({ transaction: 'each' });
      return ran.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await runner.release();
    await ds.destroy();
  }
}
