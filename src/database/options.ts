import type { DataSourceOptions } from 'typeorm';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One definition of the Postgres connection for the app and the TypeORM CLI
 * (`typeorm -d dist/database/data-source.js`). The schema lives in migrations/ only (compiled to
 * dist/migrations by `npm run build`): synchronize stays off, and the app runs pending migrations
 * at start-up.
 */
const MIGRATIONS_GLOB = join(dirname(fileURLToPath(import.meta.url)), '..', 'migrations', '*.js');

export function dataSourceOptions(databaseUrl: string, poolSize: number): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    poolSize,
    synchronize: false,
    migrationsRun: false,
    migrations: [MIGRATIONS_GLOB],
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    entities: [],
    logging: ['error', 'migration'],
    extra: {
      // No other startup parameter: DATABASE_DIRECT_URL defaults to DATABASE_URL, which may be a
      // pooler that refuses them. migrate-cli.ts sets its timeouts on its session instead.
      application_name: 'tcc-inventory',
      connectionTimeoutMillis: 5000,
    },
  };
}

