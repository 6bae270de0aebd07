import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { databaseUrl, PG_ADMIN_URL, REDIS_URL, TEMPLATE_DB } from './env.js';

/**
 * Once per run: a fresh template database migrated by the real TypeORM CLI (the same data source
 * the app uses). Every test file then clones it, so files never see each other's orders.
 */
export default async function globalSetup(): Promise<void> {
  if (!existsSync('dist/main.js')) throw new Error('dist/ is missing: run `npm test` (it builds first) or `npm run build`');
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  execFileSync(process.execPath, ['node_modules/typeorm/cli.js', '-d', 'dist/database/data-source.js', 'migration:run'], {
    env: { ...process.env, DATABASE_URL: databaseUrl(TEMPLATE_DB) },
    stdio: 'pipe',
  });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}
