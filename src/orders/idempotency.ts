import { hash } from 'node:crypto';

/** JSON with object keys sorted at every level: two bodies equal as JSON serialize the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
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

/** What an Idempotency-Key is bound to: the request body, equal as JSON with key order aside. */
export function requestHash(body: unknown): string {
  return hash('sha256', canonicalJson(body));
}
