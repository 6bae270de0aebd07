import { readdirSync, readFileSync } from 'node:fs';
import { readSqlFunctions } from '../../database/sql-functions.js';
import { withoutComments } from '../../database/sql-graph.js';
import { DEFAULT_LOCATION } from './default-location.js';

/** The string literals of SQL text that name a location (each once): compared with a location column, or the word `default` itself. */
function locationLiterals(sql: string): string[] {
  const code = withoutComments(sql);
  const at = new Map<number, string>();
  for (const m of code.matchAll(/\blocation_id\s*=\s*'([^']*)'|'([^']*)'\s*=\s*\w*\.?location_id\b/g)) {
    const literal = m[1] ?? m[2];
    at.set(m.index + m[0].indexOf(`'${literal}'`), literal);
  }
  for (const m of code.matchAll(/'(default)'/gi)) at.set(m.index, m[1]);
  return [...at].sort(([a], [b]) => a - b).map(([, literal]) => literal);
}

describe('DEFAULT_LOCATION', () => {
  it('is the one location the SQL names: every location literal of the SQL functions and statements is it', () => {
    const functions = readSqlFunctions('src').map((f) => ({ file: f.file, text: f.body }));
    const statements = (readdirSync('src', { recursive: true }) as string[])
      .filter((f) => f.endsWith('.sql.ts'))
      .map((file) => ({ file, text: readFileSync(`src/${file}`, 'utf8') }));
    const literals = [...functions, ...statements].flatMap((s) => locationLiterals(s.text).map((literal) => ({ file: s.file, literal })));
    expect(literals.filter((l) => l.literal !== DEFAULT_LOCATION)).toEqual([]);
    // The import writes a new SKU's row at the default location, unless its rows set one there.
    expect(literals.filter((l) => l.file === 'inventory/catalogue/import.sql')).toHaveLength(2);
  });

  it('finds a location literal however it is compared, and the word default wherever it is', () => {
    expect(locationLiterals(`WHERE st.location_id = 'main' AND 'x' = l.location_id -- location_id = 'c'\nSELECT s, 'Default', 1`)).toEqual(['main', 'x', 'Default']);
  });
});
