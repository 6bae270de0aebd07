import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { canonicalJson, requestHash } from './request-hash.js';

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

  it('gives the bytes stored before: a Try body, and a stock adjustment as the ledger hashed it (JSON.stringify of an array)', () => {
    const tryBody = { customerId: 'c-1', items: [{ sku: 'SKU-1', quantity: 2 }, { quantity: 1, sku: 'Ä' }], locationIds: ['default'], payment: { paymentToken: 'tok' } };
    expect(requestHash(tryBody)).toBe('923372d4f6d767375f75fc0c3a3a201670e998353436a10cab1e6de3d68fc578');
    expect(requestHash(['SKU-1', 'default', -3, 'damaged "box" é', null])).toBe('8586d850cfff0f0973bdfb94d67ac50c80350e35c5d00237e7e7ed435d963ff9');
    expect(requestHash(['SKU-1', 'store:2', 5, 'recount', 'ref-9'])).toBe('d16b5a2cf4dc55cdedf58355ffa4b65d4657be99a94198560e7b89ef67cfa657');
    // The ledger's former recipe, over any adjustment: the same hex digest.
    const ledgerBefore = (v: unknown[]) => createHash('sha256').update(JSON.stringify(v)).digest('hex');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), fc.integer(), fc.string({ unit: 'binary' }), fc.option(fc.string({ unit: 'binary' })), (sku, location, delta, reason, reference) => {
        const adjustment = [sku, location, delta, reason, reference];
        expect(requestHash(adjustment)).toBe(ledgerBefore(adjustment));
      }),
    );
  });
});
