import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSqlFunction, readSqlFunctions, SQL_FUNCTION_FILES, sqlFilesUnder } from './sql-functions.js';

const SRC = 'src';

describe('the SQL function files', () => {
  it('every src/**/*.sql is listed once, in SQL_FUNCTION_FILES, and defines one tcc_* function of its own', () => {
    expect([...SQL_FUNCTION_FILES].sort()).toEqual(sqlFilesUnder(SRC));
    const functions = readSqlFunctions(SRC);
    expect(new Set(functions.map((f) => f.name)).size).toBe(functions.length);
    for (const f of functions) expect(f.name).toMatch(/^tcc_[a-z_]+$/);
  });

  it('a LANGUAGE sql function comes after every function it calls (Postgres checks its body when it is created)', () => {
    const functions = readSqlFunctions(SRC);
    functions.forEach((f, i) => {
      if (f.language !== 'sql') return;
      const calls = functions.filter((g) => g.name !== f.name && new RegExp(`\\b${g.name}\\(`).test(f.body));
      for (const callee of calls) expect({ [f.name]: functions.indexOf(callee) < i }).toEqual({ [f.name]: true });
    });
  });

  it('the engine functions keep their pinned plan settings, and those that lock rows a bounded lock wait', () => {
    const pinned = ['plan_cache_mode=force_generic_plan', 'enable_seqscan=off', 'jit=off'];
    const engine = ['tcc_judge_trys', 'tcc_probe', 'tcc_emit', 'tcc_emit_inventory', 'tcc_flag_attention', 'tcc_low_stock'];
    const locking = ['tcc_try_batch', 'tcc_claim', 'tcc_apply'];
    const functions = readSqlFunctions(SRC);
    for (const f of functions.filter((g) => engine.includes(g.name))) expect({ [f.name]: f.settings }).toEqual({ [f.name]: pinned });
    for (const f of functions.filter((g) => locking.includes(g.name))) expect({ [f.name]: f.settings }).toEqual({ [f.name]: [...pinned, 'lock_timeout=500'] });
    expect(functions.filter((g) => [...engine, ...locking].includes(g.name))).toHaveLength(engine.length + locking.length);
  });
});

describe('parseSqlFunction', () => {
  const fn = (header: string, body = '\nBEGIN\n  RETURN 1;\nEND\n') => `-- a comment\n${header}\nAS $fn$${body}$fn$;\n`;

  it('reads the name, the signature Postgres knows it by, the body, the settings and the language', () => {
    const text = fn('CREATE OR REPLACE FUNCTION tcc_x(p_a text[], p_b double precision, p_c numeric(10, 2)) RETURNS int\nLANGUAGE plpgsql\nSET jit = off SET enable_seqscan = off');
    expect(parseSqlFunction('x.sql', text)).toMatchObject({
      name: 'tcc_x',
      signature: 'tcc_x(text[], double precision, numeric(10, 2))',
      body: '\nBEGIN\n  RETURN 1;\nEND\n',
      settings: ['jit=off', 'enable_seqscan=off'],
      language: 'plpgsql',
    });
  });

  it.each([
    ['two functions', `${fn('CREATE OR REPLACE FUNCTION tcc_a() RETURNS int LANGUAGE plpgsql')}${fn('CREATE OR REPLACE FUNCTION tcc_b() RETURNS int LANGUAGE plpgsql')}`, /one CREATE OR REPLACE FUNCTION, found 2/],
    ['a plain CREATE FUNCTION', fn('CREATE FUNCTION tcc_a() RETURNS int LANGUAGE plpgsql'), /tcc_<name>/],
    ['a name outside tcc_', fn('CREATE OR REPLACE FUNCTION other() RETURNS int LANGUAGE plpgsql'), /tcc_<name>/],
    ['an unnamed parameter', fn('CREATE OR REPLACE FUNCTION tcc_a(int) RETURNS int LANGUAGE plpgsql'), /name type/],
    ['a default', fn('CREATE OR REPLACE FUNCTION tcc_a(p_a int DEFAULT 1) RETURNS int LANGUAGE plpgsql'), /name type/],
    ['another quote', 'CREATE OR REPLACE FUNCTION tcc_a() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;', /AS \$fn\$/],
    ['a statement after the function', `${fn('CREATE OR REPLACE FUNCTION tcc_a() RETURNS int LANGUAGE plpgsql')}SELECT 1;`, /only ";"/],
    ['no language', fn('CREATE OR REPLACE FUNCTION tcc_a() RETURNS int'), /LANGUAGE/],
  ])('refuses %s', (_what, text, why) => {
    expect(() => parseSqlFunction('x.sql', text)).toThrow(why);
  });

  it('a .sql file the list does not name is refused, so no second version of a function can hide in the tree', () => {
    const root = mkdtempSync(join(tmpdir(), 'sql-functions-spec-'));
    try {
      mkdirSync(join(root, 'a'));
      writeFileSync(join(root, 'a/one.sql'), fn('CREATE OR REPLACE FUNCTION tcc_one() RETURNS int LANGUAGE plpgsql'));
      writeFileSync(join(root, 'a/two.sql'), fn('CREATE OR REPLACE FUNCTION tcc_two() RETURNS int LANGUAGE plpgsql'));
      expect(readSqlFunctions(root, ['a/one.sql', 'a/two.sql']).map((f) => f.name)).toEqual(['tcc_one', 'tcc_two']);
      expect(() => readSqlFunctions(root, ['a/one.sql'])).toThrow(/not in the list.*a\/two\.sql/);
      writeFileSync(join(root, 'a/two.sql'), fn('CREATE OR REPLACE FUNCTION tcc_one() RETURNS int LANGUAGE plpgsql'));
      expect(() => readSqlFunctions(root, ['a/one.sql', 'a/two.sql'])).toThrow(/tcc_one is defined by more than one file/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
