import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readSqlFunctions, SQL_FUNCTION_FILES, sqlFilesUnder } from './sql-functions.js';
import { applyOrder, callCycles, callGraph, forbiddenCalls, type PathRule, upwardCalls, withoutComments } from './sql-graph.js';

const require = createRequire(import.meta.url);
const { LAYERS } = require('../../layers.cjs') as { LAYERS: string[][] };
const { forbidden } = require('../../.dependency-cruiser.cjs') as { forbidden: PathRule[] };

const SRC = 'src';
const graph = () => callGraph(readSqlFunctions(SRC));
const fn = (file: string, name: string, body: string) => ({ file, name, body });

describe('the SQL functions keep the layering (layers.cjs, as the TypeScript does)', () => {
  it('no function calls one in a higher layer, or in another folder of its own layer', () => {
    expect(upwardCalls(graph(), LAYERS)).toEqual([]);
  });

  it("no call breaks a rule of .dependency-cruiser.cjs (the parts inside orders/ and inventory/ too), read as the callee's file imported by the caller's", () => {
    expect(forbiddenCalls(graph(), forbidden)).toEqual([]);
  });

  it('no TypeScript file calls a SQL function above its folder either (its statements as one caller per file)', () => {
    const functions = readSqlFunctions(SRC);
    const ts = (readdirSync(SRC, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && !f.startsWith('console/web/'))
      .map((f) => fn(f, f, readFileSync(`${SRC}/${f}`, 'utf8')));
    const callers = callGraph([...functions, ...ts]).filter((n) => n.file.endsWith('.ts'));
    expect(callers.filter((n) => n.calls.length > 0).length).toBeGreaterThan(10);
    const withCallees = [...callers, ...graph()];
    expect(upwardCalls(withCallees, LAYERS)).toEqual([]);
    expect(forbiddenCalls(withCallees, forbidden)).toEqual([]);
  });

  it('no function calls itself back through others', () => {
    expect(callCycles(graph())).toEqual([]);
  });

  it('finds the calls the engine is known to make', () => {
    const calls = new Map(graph().map((n) => [n.name, n.calls]));
    expect(calls.get('tcc_order_json')).toEqual(['tcc_iso']);
    expect(calls.get('tcc_low_stock')).toEqual(['tcc_emit_inventory']);
    expect(calls.get('tcc_try_batch')).toEqual(expect.arrayContaining(['tcc_allocate', 'tcc_emit', 'tcc_judge_trys', 'tcc_low_stock', 'tcc_order_json']));
  });

  it('a synthetic upward call, a call across to a sibling folder and a call into a part above are each caught', () => {
    const functions = [
      fn('database/iso-time.sql', 'tcc_iso', 'SELECT tcc_order_json(NULL)'),
      fn('orders/state/order-json.sql', 'tcc_order_json', 'SELECT tcc_iso(now())'),
      fn('admin/a.sql', 'tcc_a', 'SELECT tcc_c()'),
      fn('console/c.sql', 'tcc_c', 'SELECT 1'),
      fn('orders/cancel/x.sql', 'tcc_x', 'SELECT tcc_y()'),
      fn('orders/try/y.sql', 'tcc_y', 'SELECT 1'),
    ];
    expect(upwardCalls(callGraph(functions), LAYERS)).toEqual([
      { from: 'database/iso-time.sql', to: 'orders/state/order-json.sql', why: 'database (layer 3) calls up into orders (layer 7)' },
      { from: 'admin/a.sql', to: 'console/c.sql', why: 'admin calls console, another folder of its layer' },
    ]);
    expect(forbiddenCalls(callGraph(functions), forbidden).map((b) => b.why)).toEqual(['layer-database', 'layer-admin', 'inside-orders-cancel']);
    expect(callCycles(callGraph(functions))).toEqual([['tcc_iso', 'tcc_order_json', 'tcc_iso']]);
  });
});

describe('one writer each', () => {
  /** The functions whose statements (comments aside) match `pattern`. */
  const writers = (pattern: RegExp) =>
    readSqlFunctions(SRC)
      .filter((f) => pattern.test(withoutComments(f.body)))
      .map((f) => f.name)
      .sort();

  it('the stock ledger: only tcc_record_movements inserts movements, and every function that changes on hand calls it', () => {
    expect(writers(/\binsert\s+into\s+stock_movements\b/i)).toEqual(['tcc_record_movements']);
    const calls = new Map(graph().map((n) => [n.name, n.calls]));
    const onHandWriters = writers(/\bset\s+on_hand\s*=|\binsert\s+into\s+stock\b/i);
    expect(onHandWriters).toEqual(expect.arrayContaining(['tcc_apply', 'tcc_branch_settle', 'tcc_inventory_import', 'tcc_stock_adjust', 'tcc_stock_set']));
    for (const name of onHandWriters) expect({ [name]: calls.get(name) }).toEqual({ [name]: expect.arrayContaining(['tcc_record_movements']) });
  });
});

describe('the apply order', () => {
  it('SQL_FUNCTION_FILES is every .sql file once, each after every function it calls', () => {
    expect([...SQL_FUNCTION_FILES].sort()).toEqual(sqlFilesUnder(SRC));
    const fileOf = new Map(graph().map((n) => [n.name, n.file]));
    for (const node of graph()) {
      for (const callee of node.calls) expect({ [node.name]: SQL_FUNCTION_FILES.indexOf(fileOf.get(callee)!) < SQL_FUNCTION_FILES.indexOf(node.file) }).toEqual({ [node.name]: true });
    }
  });

  it('is stable: callees first, otherwise the order given; a cycle is refused, naming it', () => {
    const order = applyOrder(
      callGraph([fn('b.sql', 'tcc_b', 'SELECT tcc_c()'), fn('a.sql', 'tcc_a', 'SELECT 1'), fn('c.sql', 'tcc_c', 'SELECT tcc_a()'), fn('d.sql', 'tcc_d', 'SELECT 1')]),
    );
    expect(order).toEqual(['a.sql', 'c.sql', 'b.sql', 'd.sql']);
    expect(() => applyOrder(callGraph([fn('a.sql', 'tcc_a', 'SELECT tcc_b()'), fn('b.sql', 'tcc_b', 'PERFORM tcc_a()')]))).toThrow(/cycle: tcc_a → tcc_b → tcc_a/);
  });
});

describe('callGraph', () => {
  it('reads calls outside comments only, keeps string literals (a call in dynamic SQL counts), ignores unknown names and itself', () => {
    const body = `-- tcc_b() in a comment\n/* tcc_c() */ SELECT tcc_a(1), 'x -- y', tcc_d (2); EXECUTE 'SELECT tcc_c()'; INSERT INTO tcc_table (a) VALUES (tcc_unknown());`;
    const [a] = callGraph([fn('a.sql', 'tcc_a', body), fn('b.sql', 'tcc_b', ''), fn('c.sql', 'tcc_c', ''), fn('d.sql', 'tcc_d', '')]);
    expect(a.calls).toEqual(['tcc_c', 'tcc_d']);
    expect(withoutComments("SELECT 'it''s -- not a comment' -- but this is\n, 1")).toBe("SELECT 'it''s -- not a comment'  \n, 1");
  });
});
