import fc from 'fast-check';
import { canonicalJson, requestHash } from './idempotency.js';

describe('request hash', () => {
  it('ignores key order at every level', () => {
    const a = { customerId: 'c', items: [{ sku: 'A', quantity: 1 }] };
    const b = { items: [{ quantity: 1, sku: 'A' }], customerId: 'c' };
    expect(requestHash(a)).toBe(requestHash(b));
  });

  it('keeps array order and values', () => {
    const a = { items: [{ sku: 'A' }, { sku: 'B' }] };
    expect(requestHash(a)).not.toBe(requestHash({ items: [{ sku: 'B' }, { sku: 'A' }] }));
    expect(requestHash({ q: 1 })).not.toBe(requestHash({ q: '1' }));
  });

  it('round-trips: canonical JSON parses back to an equal value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it('orders keys exactly as Array.prototype.sort does, so hashes stored before stay valid', () => {
    const reference = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(reference).join(',')}]`
        : v !== null && typeof v === 'object'
          ? `{${Object.keys(v)
              .sort()
              .map((k) => `${JSON.stringify(k)}:${reference((v as Record<string, unknown>)[k])}`)
              .join(',')}}`
          : JSON.stringify(v);
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue(), { maxKeys: 40 }), (obj) => {
        expect(canonicalJson(obj)).toBe(reference(obj));
      }),
    );
    expect(canonicalJson({ b: 1, a: 2, B: 3, é: 4, '10': 5, '9': 6 })).toBe('{"10":5,"9":6,"B":3,"a":2,"b":1,"é":4}');
  });

  it('is invariant under shuffling object keys', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.integer()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        return requestHash(obj) === requestHash(reversed);
      }),
    );
  });
});
