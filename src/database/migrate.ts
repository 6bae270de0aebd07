import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { readSqlFunctions, SQL_ROOT } from './sql-functions.js';

const HERE = dirname(fileURLToPath(import.meta.url));
// From dist/database/ or from the build's bundle (dist/bundle/): the runner is a compiled module of dist/database/.
const CLI = join(HERE, '..', 'database', 'migrate-cli.js');
const MIGRATIONS_DIR = join(HERE, '..', 'migrations');

/** What a start-up brought up to date: the migrations it ran and the SQL function files it applied. */
export interface Migrated {
  migrations: string[];
  sqlFunctions: string[];
}

/**
 * Runs pending migrations, then applies changed SQL functions, at start-up in a child process
 * (migrate-cli.js) with this process's environment, on `directUrl` (DATABASE_DIRECT_URL: a server
 * session of its own, see migrate-cli.ts) — unless one read shows there is nothing to do: the
 * child loads TypeORM, about half a CPU-second, and most starts find the database up to date.
 * The child has no time limit (docs/API.md): a migration that builds an index for longer than any
 * limit would be killed and rolled back at every start, and one process waits for another's
 * migrations for as long as they take; the process is not ready meanwhile.
 */
export async function runPendingMigrations(directUrl: string): Promise<Migrated> {
  if (await upToDate(directUrl)) return { migrations: [], sqlFunctions: [] };
  return migrateInChild(directUrl);
}

/** The migrations' class names in `dir` (dist/migrations; TypeORM records each by its name). */
function migrationNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.js') || (f.endsWith('.ts') && !f.endsWith('.d.ts')))
    .map((f) => {
      const name = /export class (\w+) /.exec(readFileSync(join(dir, f), 'utf8'))?.[1];
      if (!name) throw new Error(`${f}: no migration class`);
      return name;
    });
}

/**
 * Whether every migration is recorded as run and every SQL function file is applied as it is now
 * (its checksum recorded, its function present, no function recorded that no file defines): what
 * migrate-cli.ts would find to do, read without its lock. Anything else — a new database, a new
 * file, another process half-way through, an error — leaves the answer to the child, which decides
 * under the lock.
 */
export async function upToDate(directUrl: string, migrationsDir = MIGRATIONS_DIR, sqlRoot = SQL_ROOT): Promise<boolean> {
  const client = new pg.Client({ connectionString: directUrl, application_name: 'tcc-inventory', connectionTimeoutMillis: 5000 });
  try {
    const names = migrationNames(migrationsDir);
    const fns = readSqlFunctions(sqlRoot);
    await client.connect();
    const { rows } = await client.query<{ ok: boolean }>(
      `SELECT to_regclass('typeorm_migrations') IS NOT NULL AND to_regclass('sql_functions') IS NOT NULL AS ok`,
    );
    if (!rows[0].ok) return false;
    const [{ missing, stale, extra }] = (
      await client.query<{ missing: number; stale: number; extra: number }>(
        `SELECT (SELECT count(*) FROM unnest($1::text[]) n WHERE NOT EXISTS (SELECT 1 FROM typeorm_migrations m WHERE m.name = n))::int AS missing,
                (SELECT count(*) FROM unnest($2::text[], $3::text[], $4::text[]) f(file, checksum, signature)
                  WHERE to_regprocedure(f.signature) IS NULL
                     OR NOT EXISTS (SELECT 1 FROM sql_functions s WHERE s.file = f.file AND s.checksum = f.checksum))::int AS stale,
                (SELECT count(*) FROM sql_functions s WHERE s.file <> ALL ($2::text[]))::int AS extra`,
        [names, fns.map((f) => f.file), fns.map((f) => f.checksum), fns.map((f) => f.signature)],
      )
    ).rows;
    return missing === 0 && stale === 0 && extra === 0;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function migrateInChild(directUrl: string): Promise<Migrated> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI], { env: { ...process.env, DATABASE_DIRECT_URL: directUrl } }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(stderr.trim() || err.message));
        return;
      }
      const line = stdout.trim().split('\n').pop() ?? '{}';
      const out = JSON.parse(line) as Partial<Migrated>;
      resolve({ migrations: out.migrations ?? [], sqlFunctions: out.sqlFunctions ?? [] });
    });
  });
}
