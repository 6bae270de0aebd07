import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { pgCode } from './sql.js';
import { SESSION_LOCKS } from './session-lock.js';
import { applyOrder, callGraph } from './sql-graph.js';

const HEADER = /^CREATE OR REPLACE FUNCTION (tcc_\w+)\(/m;
const BODY_QUOTE = '$fn$';

/** Where the .sql files are: src/ when run from source, dist/ once built (the build copies them there). */
export const SQL_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The shipped functions (under SQL_ROOT), read and parsed once, when this module loads: the list
 * below and the checksums and signatures the up-to-date check compares (readSqlFunctions(SQL_ROOT))
 * come from the one read.
 */
const SHIPPED: readonly SqlFunction[] = inApplyOrder(SQL_ROOT);

/**
 * The engine's SQL functions, one per file beside the code that calls it (paths relative to src/,
 * or dist/ once built), in the order they are applied: every `.sql` file under the root, each after
 * the functions it calls (sql-graph.ts) — a LANGUAGE sql function is checked when it is created,
 * so what it calls comes first (tcc_order_json and tcc_movement_json call tcc_iso); PL/pgSQL
 * bodies are checked when they run, but are ordered alike. Computed from the files, never listed
 * by hand.
 */
export const SQL_FUNCTION_FILES: readonly string[] = SHIPPED.map((f) => f.file);

/** Every `.sql` file under `root`, parsed, in apply order (callees first, then by path). */
function inApplyOrder(root: string): SqlFunction[] {
  const functions = sqlFilesUnder(root).map((f) => parseSqlFunction(f, readFileSync(join(root, f), 'utf8')));
  const byFile = new Map(functions.map((f) => [f.file, f]));
  return applyOrder(callGraph(functions)).map((file) => byFile.get(file)!);
}

/** What the runner and the tests read of one file. */
export interface SqlFunction {
  /** Relative to the root, with forward slashes. */
  file: string;
  text: string;
  /** sha256 of the file's text, hex. */
  checksum: string;
  name: string;
  /** The signature Postgres identifies the function by, e.g. `tcc_iso(timestamptz)`. */
  signature: string;
  /** The function's body, as pg_proc.prosrc holds it. */
  body: string;
  /** Its SET clauses, as pg_proc.proconfig holds them (`name=value`). */
  settings: string[];
  language: string;
}

/**
 * One file's function: exactly one `CREATE OR REPLACE FUNCTION tcc_…(…) … AS $fn$ … $fn$;`, every
 * parameter named (`p_keys text[]`), settings as `SET name = value`. Throws on anything else, so
 * a file the runner cannot check never reaches the database.
 */
export function parseSqlFunction(file: string, text: string): SqlFunction {
  const fail = (why: string) => new Error(`${file}: ${why}`);
  const starts = text.match(/CREATE\s+(OR\s+REPLACE\s+)?FUNCTION/gi) ?? [];
  if (starts.length !== 1) throw fail(`expected one CREATE OR REPLACE FUNCTION, found ${starts.length}`);
  const header = HEADER.exec(text);
  if (!header) throw fail('expected CREATE OR REPLACE FUNCTION tcc_<name>( at the start of a line');
  const name = header[1];
  const open = header.index + header[0].length;
  const close = matchingParen(text, open - 1);
  if (close < 0) throw fail('unbalanced parameter list');
  const params = splitTopLevel(text.slice(open, close)).map((p) => p.trim()).filter((p) => p !== '');
  const types = params.map((p) => {
    const m = /^(\w+)\s+(.+)$/s.exec(p);
    if (!m || /^(IN|OUT|INOUT|VARIADIC)$/i.test(m[1]) || /\bDEFAULT\b|=/i.test(m[2])) throw fail(`parameter "${p}": write it as "name type"`);
    return m[2].replace(/\s+/g, ' ');
  });
  const bodyStart = text.indexOf(`AS ${BODY_QUOTE}`, close);
  const bodyEnd = text.lastIndexOf(BODY_QUOTE);
  if (bodyStart < 0 || bodyEnd <= bodyStart) throw fail(`expected the body as AS ${BODY_QUOTE} … ${BODY_QUOTE}`);
  if (text.slice(bodyEnd + BODY_QUOTE.length).trim() !== ';') throw fail(`expected only ";" after the closing ${BODY_QUOTE}`);
  const clauses = text.slice(close + 1, bodyStart);
  const settings = [...clauses.matchAll(/\bSET\s+(\w+)\s*=\s*(\w+)/gi)].map((m) => `${m[1]}=${m[2]}`);
  const language = /\bLANGUAGE\s+(\w+)/i.exec(clauses)?.[1].toLowerCase();
  if (!language) throw fail('expected a LANGUAGE clause');
  return {
    file,
    text,
    checksum: createHash('sha256').update(text).digest('hex'),
    name,
    signature: `${name}(${types.join(', ')})`,
    body: text.slice(bodyStart + `AS ${BODY_QUOTE}`.length, bodyEnd),
    settings,
    language,
  };
}

/**
 * The listed files under `root` (by default all, in apply order), parsed, in the order listed.
 * Every `.sql` file under the root must be listed: a function nobody applies would be a second,
 * silent version.
 */
export function readSqlFunctions(root: string, files?: readonly string[]): SqlFunction[] {
  const functions = files ? listedFunctions(root, files) : root === SQL_ROOT ? [...SHIPPED] : inApplyOrder(root);
  const names = functions.map((f) => f.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new Error(`${twice} is defined by more than one file`);
  return functions;
}

function listedFunctions(root: string, files: readonly string[]): SqlFunction[] {
  const listed = new Set(files);
  const unlisted = sqlFilesUnder(root).filter((f) => !listed.has(f));
  if (unlisted.length > 0) throw new Error(`SQL files not in the list: ${unlisted.join(', ')}`);
  return files.map((f) => parseSqlFunction(f, readFileSync(join(root, f), 'utf8')));
}

/** Every `.sql` file under `root`, relative, with forward slashes. */
export function sqlFilesUnder(root: string): string[] {
  return (readdirSync(root, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.sql'))
    .map((f) => relative(root, join(root, f)).split(sep).join('/'))
    .sort();
}

/**
 * Brings the database's functions to the files' text, in one transaction under an advisory lock
 * (processes starting at once take turns; the second finds nothing to do). A file is applied when
 * the checksum recorded in `sql_functions` differs or is missing, or its function is gone: every
 * other overload of its name is dropped first (an old signature never lingers), then the file
 * runs; a change Postgres refuses to make in place (the return type, a parameter's name) drops
 * the function and creates it again. A recorded file that is no longer listed has its function
 * dropped. Returns the files applied.
 */
export async function applySqlFunctions(client: pg.ClientBase, root: string, files?: readonly string[]): Promise<string[]> {
  const functions = readSqlFunctions(root, files);
  const applied: string[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SESSION_LOCKS.sqlFunctions]);
    const recorded = new Map(
      (await client.query<{ file: string; function_name: string; checksum: string }>('SELECT file, function_name, checksum FROM sql_functions')).rows.map((r) => [r.file, r]),
    );
    for (const fn of functions) {
      const own = (await client.query<{ oid: number | null }>('SELECT to_regprocedure($1)::oid AS oid', [fn.signature])).rows[0].oid;
      if (own !== null && recorded.get(fn.file)?.checksum === fn.checksum) continue;
      await dropOverloads(client, fn.name, own);
      await createFunction(client, fn, own !== null);
      await client.query(
        `INSERT INTO sql_functions (file, function_name, checksum, applied_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (file) DO UPDATE SET function_name = EXCLUDED.function_name, checksum = EXCLUDED.checksum, applied_at = now()`,
        [fn.file, fn.name, fn.checksum],
      );
      applied.push(fn.file);
    }
    const live = new Set(functions.map((f) => f.name));
    for (const [file, row] of recorded) {
      if (functions.some((f) => f.file === file)) continue;
      if (!live.has(row.function_name)) await dropOverloads(client, row.function_name, null);
      await client.query('DELETE FROM sql_functions WHERE file = $1', [file]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return applied;
}

/** Drops every function of this name in the current schema but the one `keep` names. */
async function dropOverloads(client: pg.ClientBase, name: string, keep: number | null): Promise<void> {
  const { rows } = await client.query<{ oid: number; signature: string }>(
    `SELECT p.oid, p.oid::regprocedure::text AS signature FROM pg_proc p WHERE p.proname = $1 AND p.pronamespace = current_schema()::regnamespace`,
    [name],
  );
  for (const r of rows) if (r.oid !== keep) await client.query(`DROP FUNCTION ${r.signature}`);
}

/** Runs the file; when Postgres cannot replace the function in place (42P13), drops it and runs the file again. */
async function createFunction(client: pg.ClientBase, fn: SqlFunction, exists: boolean): Promise<void> {
  if (!exists) {
    await client.query(fn.text);
    return;
  }
  await client.query('SAVEPOINT sql_function');
  try {
    await client.query(fn.text);
    await client.query('RELEASE SAVEPOINT sql_function');
  } catch (err) {
    if (pgCode(err) !== '42P13') throw err;
    await client.query('ROLLBACK TO SAVEPOINT sql_function');
    await client.query(`DROP FUNCTION ${fn.signature}`);
    await client.query(fn.text);
  }
}

/** The closing parenthesis of the one opening at `at`. */
function matchingParen(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

/** Splits on commas outside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
