import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { readSqlFunctions } from '../src/database/sql-functions.js';
import { callGraph } from '../src/database/sql-graph.js';
import { createTestDatabase, TestDatabase } from './support/database.js';

/**
 * The typed boundary between the TypeScript and the SQL functions, against what the migrated
 * database really holds (pg_proc): every call of a tcc_* function from a statement passes as many
 * arguments as the function takes, each cast to the type it takes; every row type the TypeScript
 * declares for a function's answer names only its columns, each typed as node-postgres reads that
 * column (or as the statement casts it: `r_x::float8 AS r_x`); an outcome (r_outcome) declared
 * as a union of literals names only outcomes the function, or one it calls, writes out; and every
 * function answering a table has its row declared here.
 */
const ROWS: { fn: string; file: string; type: string }[] = [
  { fn: 'tcc_try_batch', file: 'src/orders/try/try.sql.ts', type: 'TryBatchRow' },
  { fn: 'tcc_probe', file: 'src/orders/try/try.sql.ts', type: 'ProbeRow' },
  { fn: 'tcc_claim', file: 'src/orders/confirm/claims.ts', type: 'ClaimRow' },
  { fn: 'tcc_apply', file: 'src/orders/state/order-store.ts', type: 'ApplyRow' },
  { fn: 'tcc_branch_reserve', file: 'src/inventory/participant/branch-stock.sql.ts', type: 'ReserveRow' },
  { fn: 'tcc_stock_set', file: 'src/inventory/stock.sql.ts', type: 'SetStockRow' },
  { fn: 'tcc_location_put', file: 'src/inventory/locations/locations.service.ts', type: 'LocationPutRow' },
  { fn: 'tcc_stock_adjust', file: 'src/inventory/ledger/ledger.sql.ts', type: 'AdjustRow' },
  { fn: 'tcc_inventory_import', file: 'src/inventory/catalogue/catalogue.sql.ts', type: 'ImportOutcomeRow' },
  { fn: 'tcc_inventory_consistency', file: 'src/recovery/inventory-consistency.sql.ts', type: 'ConsistencyRow' },
  { fn: 'tcc_inventory_repair', file: 'src/recovery/inventory-consistency.sql.ts', type: 'ConsistencyRow' },
];
/** Table functions only other functions call: no TypeScript reads their rows. */
const INTERNAL = ['tcc_allocate', 'tcc_allocate_in_turn', 'tcc_judge_trys', 'tcc_judge_one_line'];

/** How node-postgres hands a column of this type to the TypeScript (its default parsers). */
const TS_OF_PG: Record<string, string> = {
  integer: 'number',
  smallint: 'number',
  'double precision': 'number',
  real: 'number',
  bigint: 'string',
  numeric: 'string',
  text: 'string',
  uuid: 'string',
  'character varying': 'string',
  boolean: 'boolean',
  'timestamp with time zone': 'Date',
};

interface Proc {
  name: string;
  args: string[];
  columns: Map<string, string>;
  source: string;
}

let db: TestDatabase;
let procs: Map<string, Proc>;

beforeAll(async () => {
  db = await createTestDatabase();
  const rows = await db.query<{ name: string; args: string[]; modes: string[] | null; names: string[] | null; all: string[] | null; source: string }>(
    `SELECT p.proname AS name, p.proargtypes::regtype[]::text[] AS args, p.proargmodes::text[] AS modes, p.proargnames AS names,
            p.proallargtypes::regtype[]::text[] AS all, p.prosrc AS source
       FROM pg_proc p WHERE p.proname LIKE 'tcc\\_%' AND p.pronamespace = 'public'::regnamespace`,
  );
  procs = new Map(
    rows.map((r) => {
      const columns = new Map<string, string>();
      (r.modes ?? []).forEach((m, i) => m === 't' && columns.set(r.names![i], r.all![i]));
      return [r.name, { name: r.name, args: r.args, columns, source: r.source }];
    }),
  );
});
afterAll(async () => {
  await db?.drop();
});

/** Every call `tcc_x(…)` in the service's TypeScript: the file, the name, the arguments as written. */
function callsFromTypeScript(): { file: string; fn: string; args: string[] }[] {
  const files = (readdirSync('src', { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && !f.startsWith('console/web/'));
  return files.flatMap((file) => {
    const text = readFileSync(`src/${file}`, 'utf8');
    return [...text.matchAll(/\b(tcc_\w+)\(/g)]
      .filter((m) => procs.has(m[1]))
      .map((m) => ({ file, fn: m[1], args: topLevelArgs(text, m.index + m[0].length) }));
  });
}

/** The comma-separated arguments from `at` to the parenthesis that closes them. */
function topLevelArgs(text: string, at: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = at;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth++;
    else if ((c === ')' || c === ']') && depth > 0) depth--;
    else if (c === ')' || (c === ',' && depth === 0)) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
      if (c === ')') break;
    }
  }
  return args.filter((a) => a !== '');
}

it('each call from a statement passes the arguments the function takes, each cast to its type', async () => {
  const calls = callsFromTypeScript();
  expect(calls.length).toBeGreaterThan(20);
  for (const call of calls) {
    const proc = procs.get(call.fn)!;
    expect({ ...call, count: call.args.length }).toEqual({ ...call, count: proc.args.length });
    for (const [i, arg] of call.args.entries()) {
      const cast = /^\$\d+::([\w\s[\]]+)$/.exec(arg)?.[1];
      if (!cast) continue;
      const [{ type }] = await db.query<{ type: string }>('SELECT $1::regtype::text AS type', [cast]);
      expect({ ...call, arg: i + 1, type }).toEqual({ ...call, arg: i + 1, type: proc.args[i] });
    }
  }
});

describe('the row types the TypeScript declares', () => {
  const program = ts.createProgram([...new Set(ROWS.map((r) => r.file))], { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();

  /** Each property of the interface, with what its non-null parts are: number, string, boolean, Date, or string literals. */
  function declared(file: string, type: string): { name: string; kinds: Set<string>; literals: string[] }[] {
    const source = program.getSourceFile(file)!;
    const node = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === type)!;
    expect({ file, type, found: node !== undefined }).toEqual({ file, type, found: true });
    return checker.getPropertiesOfType(checker.getTypeAtLocation(node)).map((p) => {
      const t = checker.getTypeOfSymbol(p);
      const parts = (t.isUnion() ? t.types : [t]).filter((u) => !(u.flags & ts.TypeFlags.Null));
      const literals = parts.filter((u) => u.isStringLiteral()).map((u) => (u as ts.StringLiteralType).value);
      const kinds = new Set(
        parts.map((u) =>
          u.flags & (ts.TypeFlags.StringLike) ? 'string' : u.flags & ts.TypeFlags.NumberLike ? 'number' : u.flags & ts.TypeFlags.BooleanLike ? 'boolean' : checker.typeToString(u),
        ),
      );
      return { name: p.name, kinds, literals };
    });
  }

  /** The bodies of the function and of every function it calls, however deep. */
  function reachableSource(fn: string): string {
    const graph = new Map(callGraph(readSqlFunctions('src')).map((n) => [n.name, n.calls]));
    const seen = new Set<string>();
    const visit = (n: string): void => {
      if (seen.has(n)) return;
      seen.add(n);
      for (const c of graph.get(n) ?? []) visit(c);
    };
    visit(fn);
    return [...seen].map((n) => procs.get(n)!.source).join('\n');
  }

  /** The type a statement casts a column to as it reads it (`r_x::float8 AS r_x`), normalized by Postgres. */
  async function castOnRead(column: string): Promise<string | undefined> {
    const cast = new RegExp(`\\b${column}::([\\w ]+?) AS ${column}\\b`).exec(statements)?.[1];
    return cast ? (await db.query<{ type: string }>('SELECT $1::regtype::text AS type', [cast]))[0].type : undefined;
  }
  const statements = (readdirSync('src', { recursive: true }) as string[]).filter((f) => f.endsWith('.sql.ts')).map((f) => readFileSync(`src/${f}`, 'utf8')).join('\n');

  it.each(ROWS)('$fn: $type ($file) names its columns, typed as node-postgres reads them', async ({ fn, file, type }) => {
    const proc = procs.get(fn)!;
    expect(proc.columns.size).toBeGreaterThan(0);
    for (const prop of declared(file, type)) {
      const returned = proc.columns.get(prop.name);
      expect({ fn, property: prop.name, isColumn: returned !== undefined }).toEqual({ fn, property: prop.name, isColumn: true });
      const column = (await castOnRead(prop.name)) ?? returned!;
      expect({ fn, property: prop.name, column, kinds: [...prop.kinds] }).toEqual({ fn, property: prop.name, column, kinds: [TS_OF_PG[column]] });
      if (prop.name !== 'r_outcome') continue;
      expect(prop.literals.length).toBeGreaterThan(0);
      const body = reachableSource(fn);
      for (const literal of prop.literals) expect({ fn, literal, written: body.includes(`'${literal}'`) }).toEqual({ fn, literal, written: true });
    }
  });

  it('every function that answers a table and is called from the TypeScript has its row declared above', () => {
    const tables = [...procs.values()].filter((p) => p.columns.size > 0 && !INTERNAL.includes(p.name)).map((p) => p.name);
    expect(tables.sort()).toEqual([...new Set(ROWS.map((r) => r.fn))].sort());
  });
});
