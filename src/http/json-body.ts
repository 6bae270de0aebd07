import { AppError, FieldError } from '../common/errors.js';
import { UNSTORABLE } from '../common/storable-text.js';

export const BODY_LIMIT = 64 * 1024;
/** The one route that takes larger bodies (a catalogue import of up to 10,000 rows), and its limit. */
export const IMPORT_ROUTE = '/admin/inventory/import';
export const IMPORT_BODY_LIMIT = 1024 * 1024;

/**
 * A `text/csv` body sent to IMPORT_ROUTE, kept as text for the import to parse (every other body,
 * whatever its content type, is JSON).
 */
export class CsvText {
  constructor(readonly text: string) {}
}
export const MAX_DEPTH = 32;

/**
 * A request body: JSON, whatever the declared content type, with the contract's input rules
 * applied to every value before anything else looks at it. Empty means no body.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('MALFORMED_JSON', 'the body is not valid JSON');
  }
  if (!storable(value, 0)) throw AppError.validation([inspect(value, '')!]);
  return value;
}

/**
 * The input rules as a yes/no, without the field paths `inspect` builds to name a violation:
 * every body takes this way, and only a refused one is walked again for its message.
 */
function storable(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return !UNSTORABLE.test(value);
  if (value === null || typeof value !== 'object') return true;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!storable(value[i], depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    if (UNSTORABLE.test(key) || !storable((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * The first violation of the input rules that hold on every route: nested deeper than 32
 * levels, or a string (a value or a key) that holds U+0000 or a lone surrogate.
 */
export function inspect(value: unknown, path: string, depth = 0): FieldError | undefined {
  if (typeof value === 'string') {
    return UNSTORABLE.test(value) ? { field: path || 'body', message: 'must not contain U+0000 or an unpaired UTF-16 surrogate' } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_DEPTH) return { field: path || 'body', message: `is nested deeper than ${MAX_DEPTH} levels` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = inspect(value[i], `${path}[${i}]`, depth + 1);
      if (bad) return bad;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const field = path ? `${path}.${key}` : key;
    if (UNSTORABLE.test(key)) return { field: (path || 'body'), message: 'has a key that contains U+0000 or an unpaired UTF-16 surrogate' };
    const bad = inspect((value as Record<string, unknown>)[key], field, depth + 1);
    if (bad) return bad;
  }
  return undefined;
}
