import fc from 'fast-check';
import { AppError } from '../common/errors.js';
import { inspect, MAX_DEPTH, parseJsonBody } from './json-body.js';

/** Values the input rules have an opinion on: lone surrogates, NUL, deep nesting, odd keys. */
const risky = fc.oneof(fc.constantFrom('\u0000', '\uD800', '\uDC00', '\uD83D\uDE00', 'plain', '__proto__', ''), fc.string({ unit: 'binary' }));
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, risky, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 3 }),
  object: fc.dictionary(risky, tie('value'), { maxKeys: 3 }),
})).value;

const nested = (depth: number): unknown => (depth === 0 ? 'leaf' : { a: nested(depth - 1) });

describe('parseJsonBody', () => {
  it('refuses exactly what inspect names, with inspect\'s field and message', () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = JSON.stringify(value);
        const violation = inspect(JSON.parse(text), '');
        let refused: AppError | undefined;
        try {
          parseJsonBody(text);
        } catch (err) {
          refused = err as AppError;
        }
        expect(refused?.extra.errors).toEqual(violation ? [violation] : undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it('takes nesting up to the limit and refuses one level more', () => {
    expect(() => parseJsonBody(JSON.stringify(nested(MAX_DEPTH)))).not.toThrow();
    expect(() => parseJsonBody(JSON.stringify(nested(MAX_DEPTH + 1)))).toThrow(AppError);
  });
});
