import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { AppError } from '../common/errors.js';
import { isPgTimestamp, SignedCursor } from '../common/signed-cursor.js';
import { isPosition, ORDER_LIST_CURSOR } from './cursor.js';

const SECRET = Buffer.from('cursor-spec-key-0123456789abcdef');
/** The admin order list's cursors, as AdminService makes and reads them. */
const cursors = (secret: Buffer) => {
  const c = new SignedCursor(secret, ORDER_LIST_CURSOR);
  return { encode: (p: [string, string]) => c.encode(p), decode: (raw: string) => c.decode(raw, 2, isPosition) };
};
const codec = cursors(SECRET);
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

/** A cursor signed with the service's key around any inner value: what only a key holder could forge. */
function signed(inner: string): string {
  const key = createHmac('sha256', `tcc-cursor:${ORDER_LIST_CURSOR}`).update(SECRET).digest();
  const payload = Buffer.from(inner).toString('base64url');
  return `${payload}.${createHmac('sha256', key).update(payload).digest('base64url')}`;
}

function refused(raw: string): boolean {
  try {
    codec.decode(raw);
    return false;
  } catch (err) {
    return err instanceof AppError && err.code === 'VALIDATION_FAILED';
  }
}

describe('the admin order list cursor', () => {
  it('decodes what it encodes', () => {
    const ts = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => {
      const iso = d.toISOString();
      return `${iso.slice(0, 10)} ${iso.slice(11, 23)}${'000'}+00`;
    });
    fc.assert(
      fc.property(ts, fc.uuid(), (createdAt, id) => {
        expect(codec.decode(codec.encode([createdAt, id]))).toEqual([createdAt, id]);
      }),
      { seed: 4242, numRuns: 300 },
    );
  });

  it('refuses extra parts, a changed character anywhere, and another key', () => {
    const good = codec.encode(['2026-11-22 00:56:09.362983+00', ID]);
    expect(refused(`${good}.x`)).toBe(true);
    expect(refused(`x.${good}`)).toBe(true);
    expect(refused(good.replace('.', '..'))).toBe(true);
    expect(refused(cursors(Buffer.from('another-key-0123456789abcdefghij')).encode(['2026-11-22 00:56:09+00', ID]))).toBe(true);
    fc.assert(
      fc.property(fc.nat({ max: good.length - 1 }), fc.constantFrom(...'ABCxyz019-_.'), (at, ch) => {
        fc.pre(good[at] !== ch);
        expect(refused(good.slice(0, at) + ch + good.slice(at + 1))).toBe(true);
      }),
      { seed: 7, numRuns: 200 },
    );
  });

  it.each([
    ['a date that does not exist', ['2026-02-30 00:00:00+00', ID]],
    ['month 13', ['2026-13-01 00:00:00+00', ID]],
    ['year 0', ['0000-01-01 00:00:00+00', ID]],
    ['hour 24', ['2026-01-01 24:00:00+00', ID]],
    ['an offset of +99', ['2026-01-01 00:00:00+99', ID]],
    ['an ISO timestamp', ['2026-01-01T00:00:00.000Z', ID]],
    ['an id that is not a UUID', ['2026-01-01 00:00:00+00', 'not-a-uuid']],
    ['three elements', ['2026-01-01 00:00:00+00', ID, 'x']],
    ['an object', { createdAt: '2026-01-01 00:00:00+00', id: ID }],
    ['numbers', [1, 2]],
  ])('refuses a well-signed cursor holding %s', (_label, inner) => {
    expect(refused(signed(JSON.stringify(inner)))).toBe(true);
  });

  it('refuses a well-signed cursor that is not JSON', () => {
    expect(refused(signed('not json'))).toBe(true);
  });
});

describe('isPgTimestamp', () => {
  it.each(['2026-11-22 00:56:09.362983+00', '2024-02-29 23:59:59+05:30', '0001-01-01 00:00:00-12'])('accepts %s', (ts) => {
    expect(isPgTimestamp(ts)).toBe(true);
  });
  it.each(['2025-02-29 00:00:00+00', '2026-04-31 00:00:00+00', '2026-01-01 00:60:00+00', '2026-01-01 00:00:00'])('refuses %s', (ts) => {
    expect(isPgTimestamp(ts)).toBe(false);
  });
});
