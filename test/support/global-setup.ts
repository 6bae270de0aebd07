// First: on an older Node the suite's every spec would fail with a TypeError from a dependency.
// Jest loads this file's imports natively (no module mapper, no TypeScript on Node 20), so it is the built check.
import '../../dist/common/node-version.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';

// Jest loads this file's own imports natively (no module mapper), so the shared constants live
// here and env.ts re-exports them for the specs.
export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// One template per run (inherited by the test files through the environment), so two runs on one
// machine never drop each other's template.
process.env.TCC_TEST_TEMPLATE ??= `tcc_test_template_${process.pid}`;
export const TEMPLATE_DB = process.env.TCC_TEST_TEMPLATE;
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export function databaseUrl(name: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Once per run: a fresh template database brought up to date by the service's own migration entry
 * (dist/database/migrate-cli.js: the migrations, then the SQL functions), as at start-up. Every
 * test file then clones it, so files never see each other's orders.
 */
export default async function globalSetup(): Promise<void> {
  // Once per run, however many of the projects that share it (medium, e2e, e2e-in-band) run.
  if (process.env.TCC_TEST_TEMPLATE_READY === TEMPLATE_DB) return;
  if (!existsSync('dist/main.js')) throw new Error('dist/ is missing: run `npm test` (it builds first) or `npm run build`');
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  execFileSync(process.execPath, ['dist/database/migrate-cli.js'], {
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
  process.env.TCC_TEST_TEMPLATE_READY = TEMPLATE_DB;
}
