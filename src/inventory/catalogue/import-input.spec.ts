import { CsvText } from '../../http/json-body.js';
import { importColumnsOf, importRowsOf } from './import-input.js';

const fields = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    return ((err as { extra: { errors: { field: string }[] } }).extra.errors ?? []).map((e) => e.field);
  }
  throw new Error('expected VALIDATION_FAILED');
};

describe('importRowsOf', () => {
  it('reads JSON rows as they are', () => {
    expect(importRowsOf({ items: [{ sku: 'A', onHand: 2 }] })).toEqual([{ sku: 'A', onHand: 2 }]);
  });

  it('reads CSV by its header: quoting, a BOM, CRLF, empty fields not given, integers as numbers', () => {
    const csv = '\uFEFFsku,name,priceMinor,onHand\r\nA,"a, ""big"" one",100,\r\nB,,,7\r\n';
    expect(importRowsOf(new CsvText(csv))).toEqual([
      { sku: 'A', name: 'a, "big" one', priceMinor: 100 },
      { sku: 'B', onHand: 7 },
    ]);
  });

  it('names what is wrong: an unknown or repeated column, no sku column, a bad value by its row, broken CSV', () => {
    expect(fields(() => importRowsOf(new CsvText('sku,colour\nA,red\n')))).toEqual(['colour']);
    expect(fields(() => importRowsOf(new CsvText('sku,sku\nA,A\n')))).toEqual(['sku']);
    expect(fields(() => importRowsOf(new CsvText('onHand\n1\n')))).toEqual(['sku']);
    expect(fields(() => importRowsOf(new CsvText('sku,onHand\nA,1\nB,many\n')))).toEqual(['items[1].onHand']);
    expect(fields(() => importRowsOf(new CsvText('sku,onHand\nA,1.5\n')))).toEqual(['items[0].onHand']);
    expect(fields(() => importRowsOf(new CsvText('sku,onHand\n"A,1\n')))).toEqual(['body']);
    expect(fields(() => importRowsOf(new CsvText('sku\n')))).toEqual(['items']);
    expect(fields(() => importRowsOf(new CsvText('')))).toEqual(['body']);
  });

  it('refuses more than 10,000 rows', () => {
    const csv = `sku\n${Array.from({ length: 10_001 }, (_, i) => `S${i}`).join('\n')}\n`;
    expect(fields(() => importRowsOf(new CsvText(csv)))).toEqual(['items']);
  });
});

describe('importColumnsOf', () => {
  it("merges each SKU's own values across its rows; locations default to default", () => {
    const c = importColumnsOf([
      { sku: 'A', priceMinor: 5, currency: 'USD', onHand: 1 },
      { sku: 'A', locationId: 'shop', onHand: 2, lowStockThreshold: 3 },
    ]);
    expect(c).toEqual({
      skus: ['A', 'A'],
      names: [null, null],
      prices: [5, 5],
      currencies: ['USD', 'USD'],
      thresholds: [3, 3],
      locations: ['default', 'shop'],
      onHands: [1, 2],
      safetyStocks: [null, null],
    });
  });

  it('refuses rows of one SKU that disagree, and a location named twice for one SKU', () => {
    expect(fields(() => importColumnsOf([{ sku: 'A', priceMinor: 5 }, { sku: 'A', locationId: 'x', priceMinor: 6 }]))).toEqual(['items[1].priceMinor']);
    expect(fields(() => importColumnsOf([{ sku: 'A', onHand: 1 }, { sku: 'B' }, { sku: 'A', locationId: 'default' }]))).toEqual(['items[2].locationId']);
  });
});
