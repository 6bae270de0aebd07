import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind, type TSchema } from '@sinclair/typebox';
import { compile } from './validation.js';

/**
 * The schemas are compiled on their first request (validation.ts), so this is where a broken one
 * is caught: every schema a route validates with — named in `new BodyPipe(X)`, `new QueryPipe(X)`
 * or `validateBody(X, …)` anywhere in src/ — is exported by a `*.schemas.ts` file (or
 * http/schemas.ts), and compiles under the validator's strict options.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'web' ? [] : sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

const files = sources(SRC);
const USE = /(?:new (?:BodyPipe|QueryPipe)|validateBody)\(([A-Za-z_$][\w$]*)/g;
const used = new Map<string, string>();
for (const file of files) {
  for (const m of readFileSync(file, 'utf8').matchAll(USE)) {
    // The pipes' own generic parameter in validation.ts's doc comments and code.
    if (m[1] !== 'Schema' && m[1] !== 'this') used.set(m[1], file.slice(SRC.length + 1));
  }
}

const isSchema = (v: unknown): v is TSchema => typeof v === 'object' && v !== null && Kind in v;

describe('the schemas the routes validate with', () => {
  let exported: Map<string, TSchema>;

  beforeAll(async () => {
    exported = new Map();
    for (const file of files.filter((f) => f.endsWith('.schemas.ts') || f.endsWith(join('http', 'schemas.ts')))) {
      const mod = (await import(file)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) if (isSchema(value)) exported.set(name, value);
    }
  });

  it('are found in the routes (the scan works)', () => {
    expect(used.size).toBeGreaterThan(25);
    expect([...used.keys()]).toEqual(expect.arrayContaining(['CreateOrderBody', 'ConfirmBody', 'ListOrdersQuery', 'BranchQuery']));
  });

  it('are each exported by a schemas file', () => {
    const missing = [...used].filter(([name]) => !exported.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });

  it('each compile under the strict options', () => {
    for (const name of used.keys()) expect(() => compile(exported.get(name)!)).not.toThrow();
  });

  it('a schema the strict options refuse does not compile (the check can fail)', () => {
    expect(() => compile({ type: 'object', properties: { a: { type: 'string', minimum: 1, nonsense: true } } } as unknown as TSchema)).toThrow();
  });
});
