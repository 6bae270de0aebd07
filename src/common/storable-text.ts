/** U+0000, or a UTF-16 surrogate without its other half: Postgres cannot store either in text or jsonb. */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this looks for
export const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/**
 * Text as it can be stored: each U+0000 and each unpaired surrogate replaced by U+FFFD. For what is
 * recorded as it came (a path parameter in the audit log, say), never for input that is judged:
 * the input rules refuse such a body instead (http/json-body.ts).
 */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\uFFFD') : text;
}

/** JSON of `value` with every string, keys included, made storable (storableText). */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key: string, v: unknown) {
    if (typeof v === 'string') return storableText(v);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const keys = Object.keys(v);
    if (!keys.some((k) => UNSTORABLE.test(k))) return v;
    return Object.fromEntries(keys.map((k) => [storableText(k), (v as Record<string, unknown>)[k]]));
  });
}
