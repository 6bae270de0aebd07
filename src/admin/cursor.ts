import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../common/errors.js';
import { isOrderId } from '../http/schemas.js';

/** Where a page of the admin order list ends: the last order's created_at (as Postgres wrote it) and id. */
export type Position = [createdAt: string, id: string];

const SHAPE = /^[A-Za-z0-9_-]{1,400}\.[A-Za-z0-9_-]{43}$/;
const PG_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?[+-](\d{2})(?::(\d{2}))?$/;

/**
 * A timestamp exactly as Postgres writes `created_at::text`, and one it can read back: the shape
 * alone lets "2026-02-30" or "+99" through, which Postgres would refuse (a 500, not a 400).
 */
export function isPgTimestamp(text: string): boolean {
  const m = PG_TIMESTAMP.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((v) => Number(v ?? 0));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 15 && offsetMinutes <= 59;
}

/**
 * `nextCursor` of the admin order list: the position as base64url JSON, a dot, and its HMAC under
 * a key derived from ADMIN_TOKEN. Decoding is strict: exactly two parts, a signature this service
 * made, and an inner value of exactly the shape it writes — anything else is VALIDATION_FAILED,
 * never a query Postgres refuses.
 */
export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', 'tcc-cursor').update(secret).digest();
  }

  encode(position: Position): string {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode(raw: string): Position {
    const invalid = () => AppError.validation([{ field: 'cursor', message: 'cursor was not issued by this service' }]);
    if (!SHAPE.test(raw)) throw invalid();
    const [payload, sig] = raw.split('.');
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    let c: unknown;
    try {
      c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(c) || c.length !== 2 || typeof c[0] !== 'string' || typeof c[1] !== 'string' || !isPgTimestamp(c[0]) || !isOrderId(c[1])) {
      throw invalid();
    }
    return [c[0], c[1]];
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
