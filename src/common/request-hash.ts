import { hash } from 'node:crypto';

/** JSON with object keys sorted at every level: two bodies equal as JSON serialize the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = sortedKeys(value);
    let out = '{';
    let first = true;
    for (const k of keys) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
      first = false;
    }
    return `${out}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What an Idempotency-Key is bound to, the one recipe for every keyed request (a Try's body; a
 * stock adjustment's SKU, location and body as an array): sha256, hex, of the value's canonical
 * JSON — equal as JSON with key order aside. The hashes stored with orders and movements were
 * made so: change the recipe and a retry of a stored request answers IDEMPOTENCY_KEY_REUSED.
 */
export function requestHash(body: unknown): string {
  return hash('sha256', canonicalJson(body));
}

/**
 * Object.keys in code-unit order, as Array.prototype.sort orders them. Bodies hold a handful of
 * keys (their schema refuses unknown ones), and sort() allocates its work space on every call:
 * an insertion sort allocates nothing, on the path every Try takes.
 */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i];
    let j = i - 1;
    for (; j >= 0 && keys[j] > k; j--) keys[j + 1] = keys[j];
    keys[j + 1] = k;
  }
  return keys;
}
