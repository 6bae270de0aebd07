/**
 * The call graph of the engine's SQL functions (the `.sql` files sql-functions.ts applies): for
 * each function, its file and the `tcc_*` functions its body calls. From it come the order the
 * files are applied in (what a function calls first: Postgres checks a LANGUAGE sql body when it
 * is created) and the check that SQL keeps the layering the TypeScript keeps (layers.cjs): a call
 * goes to the caller's own folder or to a layer below, never up, never across to a sibling.
 * Pure: it reads what it is given.
 */

/** What the graph needs of a parsed function (sql-functions.ts `SqlFunction`). */
export interface SqlSource {
  file: string;
  name: string;
  body: string;
}

export interface SqlNode {
  /** Relative to src/, with forward slashes. */
  file: string;
  name: string;
  /** The other listed functions its body calls, sorted. */
  calls: string[];
}

/** One call that breaks a rule: the caller's file, the callee's file, and why. */
export interface BadCall {
  from: string;
  to: string;
  why: string;
}

/** A rule of .dependency-cruiser.cjs's `forbidden`, as far as paths go. */
export interface PathRule {
  name: string;
  from: { path?: string | string[]; pathNot?: string | string[] };
  to: { path?: string | string[]; pathNot?: string | string[]; circular?: boolean };
}

/** The graph of these functions: a call is a name of one of them followed by `(`, outside comments. */
export function callGraph(functions: readonly SqlSource[]): SqlNode[] {
  const names = new Set(functions.map((f) => f.name));
  return functions.map((f) => {
    const called = [...withoutComments(f.body).matchAll(/\b(tcc_\w+)\s*\(/g)].map((m) => m[1]);
    const calls = [...new Set(called)].filter((n) => n !== f.name && names.has(n)).sort();
    return { file: f.file, name: f.name, calls };
  });
}

/**
 * The files in an order where each function comes after every function it calls; among those
 * free to go next, the first in the given order (so the result is stable). Throws on a cycle.
 */
export function applyOrder(graph: readonly SqlNode[]): string[] {
  const byName = new Map(graph.map((n) => [n.name, n]));
  const placed = new Set<string>();
  const order: string[] = [];
  while (order.length < graph.length) {
    const next = graph.find((n) => !placed.has(n.name) && n.calls.every((c) => placed.has(c) || !byName.has(c)));
    if (!next) throw new Error(`SQL functions call each other in a cycle: ${callCycles(graph).map((c) => c.join(' → ')).join('; ')}`);
    placed.add(next.name);
    order.push(next.file);
  }
  return order;
}

/** Every cycle of calls, each as the names around it (the first again at the end); none in a sound graph. */
export function callCycles(graph: readonly SqlNode[]): string[][] {
  const byName = new Map(graph.map((n) => [n.name, n]));
  const cycles: string[][] = [];
  const done = new Set<string>();
  const visit = (name: string, path: string[]): void => {
    const at = path.indexOf(name);
    if (at >= 0) {
      cycles.push([...path.slice(at), name]);
      return;
    }
    if (done.has(name)) return;
    for (const c of byName.get(name)?.calls ?? []) visit(c, [...path, name]);
    done.add(name);
  };
  for (const n of graph) visit(n.name, []);
  return cycles;
}

/** Where a file sits: its layer's index in `layers` (-1 when it is in none) and its folder (or top-level file). */
export function placeOf(file: string, layers: readonly (readonly string[])[]): { layer: number; folder: string } {
  const folder = file.split('/')[0];
  return { layer: layers.findIndex((l) => l.includes(folder)), folder };
}

/** The calls that go up the layering, across to another folder of the caller's layer, or from or to a folder outside it. */
export function upwardCalls(graph: readonly SqlNode[], layers: readonly (readonly string[])[]): BadCall[] {
  return edges(graph).flatMap(({ from, to }) => {
    const a = placeOf(from, layers);
    const b = placeOf(to, layers);
    if (a.layer < 0 || b.layer < 0) return [{ from, to, why: `${a.layer < 0 ? a.folder : b.folder} is on no layer (layers.cjs)` }];
    if (b.layer > a.layer) return [{ from, to, why: `${a.folder} (layer ${a.layer + 1}) calls up into ${b.folder} (layer ${b.layer + 1})` }];
    if (b.layer === a.layer && b.folder !== a.folder) return [{ from, to, why: `${a.folder} calls ${b.folder}, another folder of its layer` }];
    return [];
  });
}

/** The calls a path rule of dependency-cruiser forbids, read as if each call were an import of the callee's file by the caller's. */
export function forbiddenCalls(graph: readonly SqlNode[], rules: readonly PathRule[]): BadCall[] {
  const matches = (p: string | string[] | undefined, path: string, none: boolean) =>
    p === undefined ? none : [p].flat().some((re) => new RegExp(re).test(path));
  return edges(graph).flatMap(({ from, to }) => {
    const [a, b] = [`src/${from}`, `src/${to}`];
    return rules
      .filter((r) => !r.to.circular && (r.from.path !== undefined || r.to.path !== undefined))
      .filter((r) => matches(r.from.path, a, true) && !matches(r.from.pathNot, a, false))
      .filter((r) => matches(r.to.path, b, true) && !matches(r.to.pathNot, b, false))
      .map((r) => ({ from, to, why: r.name }));
  });
}

function edges(graph: readonly SqlNode[]): { from: string; to: string }[] {
  const fileOf = new Map(graph.map((n) => [n.name, n.file]));
  return graph.flatMap((n) => n.calls.filter((c) => fileOf.has(c)).map((c) => ({ from: n.file, to: fileOf.get(c)! })));
}

/** SQL text with its comments (`-- …`, `/* … *\/`) blanked; string literals kept as they are. */
export function withoutComments(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    if (sql[i] === "'") {
      const end = closingQuote(sql, i);
      out += sql.slice(i, end);
      i = end;
    } else if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
      out += ' ';
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      out += ' ';
    } else {
      out += sql[i++];
    }
  }
  return out;
}

/** The index just past the quote that closes the literal opening at `at` ('' is a quote inside it). */
function closingQuote(sql: string, at: number): number {
  let i = at + 1;
  while (i < sql.length) {
    if (sql[i] !== "'") i++;
    else if (sql[i + 1] === "'") i += 2;
    else return i + 1;
  }
  return sql.length;
}
