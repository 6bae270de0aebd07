/**
 * JSON with every object's keys sorted (arrays keep their order), two-space indented, with a
 * trailing newline: the same document always prints the same bytes, whatever order decorators
 * and spreads happened to add its keys in, so a committed copy diffs cleanly.
 */
export function stableJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(source)
      .filter((k) => source[k] !== undefined)
      .sort()
      .map((k) => [k, sortKeys(source[k])]),
  );
}
