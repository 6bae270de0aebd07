import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from './errors.js';

const FORM = /^[A-Za-z0-9_-]{1,400}\.[A-Za-z0-9_-]{43}$/;
const PG_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?[+-](\d{2})(?::(\d{2}))?$/;

/**
 * A timestamp exactly as Postgres writes `timestamptz::text`, and one it can read back: the shape
 * alone lets "2026-02-30" or "+99" through, which Postgres would refuse (a 500, not a 400). The
 * usual first value of a keyset cursor.
 */
export function isPgTimestamp(text: string): boolean {
  const m = PG_TIMESTAMP.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((v) => Number(v ?? 0));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 15 && offsetMinutes <= 59;
}

/** The purpose cursors' keys are derived under from the deployment key (database/deployment-key.ts). */
export const CURSOR_KEY_PURPOSE = 'paging-cursors';

/**
 * Keyset-pagination cursors this service issues: the position's values as base64url JSON, signed
 * with an HMAC, so a cursor is either exactly one we wrote or VALIDATION_FAILED — never a query
 * built from what a client made up. `purpose` keeps one listing's cursors out of another's. The
 * key is the deployment's own (random, kept in the database), never derived from a credential: a
 * cursor travels in shareable console links, and one signed under a token-derived key would let
 * anyone holding it test guesses of the token offline.
 */
export class SignedCursor {
  private readonly key: Buffer;

  constructor(cursorKey: Buffer, purpose: string) {
    this.key = createHmac('sha256', `tcc-cursor:${purpose}`).update(cursorKey).digest();
  }

  encode(values: string[]): string {
    const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The values, if `raw` is ours and `valid` accepts them; else VALIDATION_FAILED on `field`. */
  decode(raw: string, arity: number, valid: (values: string[]) => boolean, field = 'cursor'): string[] {
    const invalid = () => AppError.validation([{ field, message: 'cursor was not issued by this service' }]);
    if (!FORM.test(raw)) throw invalid();
    const [payload, sig] = raw.split('.');
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    let values: unknown;
    try {
      values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(values) || values.length !== arity || !values.every((v) => typeof v === 'string') || !valid(values)) throw invalid();
    return values;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
