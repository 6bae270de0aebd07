import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { upToDate } from '../../src/database/migrate.js';
import { SQL_ROOT } from '../../src/database/sql-functions.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { databaseUrl, PG_ADMIN_URL } from '../support/env.js';

/**
 * A start skips the migration child (it loads TypeORM) only when one read shows nothing to do:
 * every migration recorded, every SQL function file applied as it is now. Each way the database can
 * fall behind the files makes the read say no, so the child runs and decides under its lock.
 */
const MIGRATIONS = join(process.cwd(), 'migrations');
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const check = () => upToDate(db.url, MIGRATIONS, SQL_ROOT);

it('a database brought up to date (as the test template is) needs nothing', async () => {
  expect(await check()).toBe(true);
});

it('a migration not recorded: the child must run', async () => {
  const [last] = await db.query<{ id: number; timestamp: string; name: string }>(`SELECT id, timestamp::text, name FROM typeorm_migrations ORDER BY timestamp DESC LIMIT 1`);
  await db.query(`DELETE FROM typeorm_migrations WHERE id = $1`, [last.id]);
  try {
    expect(await check()).toBe(false);
  } finally {
    await db.query(`INSERT INTO typeorm_migrations (id, timestamp, name) VALUES ($1, $2, $3)`, [last.id, last.timestamp, last.name]);
  }
  expect(await check()).toBe(true);
});

it('an SQL function file whose recorded checksum differs, or that is not recorded, or whose function is gone: the child must run', async () => {
  const [row] = await db.query<{ file: string; checksum: string; function_name: string }>(`SELECT file, checksum, function_name FROM sql_functions ORDER BY file LIMIT 1`);
  await db.query(`UPDATE sql_functions SET checksum = 'x' WHERE file = $1`, [row.file]);
  expect(await check()).toBe(false);
  await db.query(`DELETE FROM sql_functions WHERE file = $1`, [row.file]);
  expect(await check()).toBe(false);
  await db.query(`INSERT INTO sql_functions (file, function_name, checksum, applied_at) VALUES ($1, $2, $3, now())`, [row.file, row.function_name, row.checksum]);
  expect(await check()).toBe(true);

  await db.query(`INSERT INTO sql_functions (file, function_name, checksum, applied_at) VALUES ('gone/old.sql', 'tcc_old', 'y', now())`);
  expect(await check()).toBe(false);
  await db.query(`DELETE FROM sql_functions WHERE file = 'gone/old.sql'`);

  const [fn] = await db.query<{ signature: string }>(`SELECT p.oid::regprocedure::text AS signature FROM pg_proc p WHERE p.proname = 'tcc_iso'`);
  await db.query(`ALTER FUNCTION ${fn.signature} RENAME TO tcc_iso_moved`);
  try {
    expect(await check()).toBe(false);
  } finally {
    await db.query(`ALTER FUNCTION tcc_iso_moved(${fn.signature.replace(/^[^(]*\(/, '').replace(/\)$/, '')}) RENAME TO tcc_iso`);
  }
  expect(await check()).toBe(true);
});

it('a new, empty database, or one that cannot be reached: the child must run', async () => {
  const name = `tcc_t_empty_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    expect(await upToDate(databaseUrl(name), MIGRATIONS, SQL_ROOT)).toBe(false);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
  expect(await upToDate('postgres://postgres@127.0.0.1:1/none', MIGRATIONS, SQL_ROOT)).toBe(false);
});
