import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { applySqlFunctions, SQL_FUNCTION_FILES } from '../../src/database/sql-functions.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';

/**
 * The engine's SQL functions live in src/**\/*.sql, one per file, applied after the migrations
 * (the test database was made by dist/database/migrate-cli.js, as at start-up). The database runs
 * exactly the files' text — body and settings — with the checksum of each file recorded, and no
 * other tcc_* function; a changed file is applied again, an old signature of its function is
 * dropped, and a change Postgres cannot make in place (the return type) still lands.
 */
let db: TestDatabase;

/** What the file says, read without the runner's parser: the name, the body between the $fn$ quotes, the SET clauses. */
function fileFacts(root: string, file: string): { name: string; body: string; settings: string[]; checksum: string } {
  const text = readFileSync(join(root, file), 'utf8');
  const name = /CREATE OR REPLACE FUNCTION (\w+)\(/.exec(text)![1];
  const open = text.indexOf('AS $fn$') + 'AS $fn$'.length;
  const body = text.slice(open, text.lastIndexOf('$fn$'));
  const header = text.slice(text.indexOf('CREATE OR REPLACE FUNCTION'), open);
  const settings = [...header.matchAll(/SET (\w+) = (\w+)/g)].map((m) => `${m[1]}=${m[2]}`);
  return { name, body, settings, checksum: createHash('sha256').update(text).digest('hex') };
}

async function expectDatabaseRuns(root: string): Promise<void> {
  const names: string[] = [];
  for (const file of SQL_FUNCTION_FILES) {
    const f = fileFacts(root, file);
    names.push(f.name);
    const fns = await db.query<{ prosrc: string; proconfig: string[] | null }>(
      `SELECT p.prosrc, p.proconfig FROM pg_proc p WHERE p.proname = $1 AND p.pronamespace = 'public'::regnamespace`,
      [f.name],
    );
    expect({ file, count: fns.length }).toEqual({ file, count: 1 });
    expect({ file, body: fns[0].prosrc, settings: fns[0].proconfig ?? [] }).toEqual({ file, body: f.body, settings: f.settings });
    const recorded = await db.query(`SELECT function_name, checksum FROM sql_functions WHERE file = $1`, [file]);
    expect(recorded).toEqual([{ function_name: f.name, checksum: f.checksum }]);
  }
  const all = await db.query<{ proname: string }>(`SELECT p.proname FROM pg_proc p WHERE p.proname LIKE 'tcc\\_%' AND p.pronamespace = 'public'::regnamespace`);
  expect(all.map((r) => r.proname).sort()).toEqual([...names].sort());
  expect(await db.query(`SELECT file FROM sql_functions WHERE NOT (file = ANY ($1::text[]))`, [SQL_FUNCTION_FILES])).toEqual([]);
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

it('the database runs exactly the text of src/**/*.sql: one function per file, its body and settings, its checksum recorded, no other tcc_* function', async () => {
  await expectDatabaseRuns('src');
});

it('a changed file is applied again: an old signature of its function is dropped, a new return type lands, a dropped function comes back', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sql-functions-'));
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    cpSync('src', scratch, { recursive: true, filter: (p) => statSync(p).isDirectory() || p.endsWith('.sql') });
    await expect(applySqlFunctions(client, scratch)).resolves.toEqual([]);

    // A return type Postgres will not change in place, and a probe beside an older signature of its name.
    const iso = join(scratch, 'database/iso-time.sql');
    writeFileSync(iso, readFileSync(iso, 'utf8').replace('RETURNS text', 'RETURNS varchar'));
    const probe = join(scratch, 'orders/try/probe.sql');
    writeFileSync(probe, readFileSync(probe, 'utf8').replace('BEGIN\n', 'BEGIN\n  -- changed\n'));
    await client.query(`CREATE FUNCTION tcc_probe(p_keys text[]) RETURNS int LANGUAGE sql AS 'SELECT 1'`);
    await client.query(`DROP FUNCTION tcc_emit(text, uuid[])`);

    await expect(applySqlFunctions(client, scratch)).resolves.toEqual(['database/iso-time.sql', 'orders/state/outbox.sql', 'orders/try/probe.sql']);
    await expectDatabaseRuns(scratch);
    const [{ type }] = await db.query<{ type: string }>(`SELECT prorettype::regtype::text AS type FROM pg_proc WHERE proname = 'tcc_iso'`);
    expect(type).toBe('character varying');
    await expect(applySqlFunctions(client, scratch)).resolves.toEqual([]);

    // And back to the tree's text.
    await expect(applySqlFunctions(client, 'src')).resolves.toEqual(['database/iso-time.sql', 'orders/try/probe.sql']);
    await expectDatabaseRuns('src');
  } finally {
    await client.end();
    rmSync(scratch, { recursive: true, force: true });
  }
});

it('a file moved to another folder (its text unchanged) is recorded under its new path, the old row goes, and its function stays as it was', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sql-functions-'));
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    cpSync('src', scratch, { recursive: true, filter: (p) => statSync(p).isDirectory() || p.endsWith('.sql') });
    const before = await db.query(`SELECT p.oid, p.prosrc FROM pg_proc p WHERE p.proname = 'tcc_emit'`);
    mkdirSync(join(scratch, 'elsewhere'));
    renameSync(join(scratch, 'orders/state/outbox.sql'), join(scratch, 'elsewhere/outbox.sql'));
    await expect(applySqlFunctions(client, scratch)).resolves.toEqual(['elsewhere/outbox.sql']);
    expect(await db.query(`SELECT p.oid, p.prosrc FROM pg_proc p WHERE p.proname = 'tcc_emit'`)).toEqual(before);
    expect(await db.query(`SELECT file FROM sql_functions WHERE function_name = 'tcc_emit'`)).toEqual([{ file: 'elsewhere/outbox.sql' }]);

    await expect(applySqlFunctions(client, 'src')).resolves.toEqual(['orders/state/outbox.sql']);
    await expectDatabaseRuns('src');
  } finally {
    await client.end();
    rmSync(scratch, { recursive: true, force: true });
  }
});
