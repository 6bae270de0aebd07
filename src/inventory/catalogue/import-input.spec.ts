import { CsvText } from '../../http/json-body.js';
import { importColumnsOf, importRowsOf, recordLines } from './import-input.js';

const errorsOf = (fn: () => unknown): { field: string; line?: number }[] => {
  try {
    fn();
  } catch (err) {
    return (err as { extra: { errors: { field: string; line?: number }[] } }).extra.errors ?? [];
  }
  throw new Error('expected VALIDATION_FAILED');
};
const fields = (fn: () => unknown): string[] => errorsOf(fn).map((e) => e.field);

describe('importRowsOf', () => {
  it('reads JSON rows as they are', () => {
    expect(importRowsOf({ items: [{ sku: 'A', onHand: 2 }] })).toEqual({ rows: [{ sku: 'A', onHand: 2 }] });
  });

  it('reads CSV by its header: quoting, a BOM, CRLF, empty fields not given, integers as numbers', () => {
    const csv = '\uFEFFsku,name,priceMinor,onHand\r\nA,"a, ""big"" one",100,\r\nB,,,7\r\n';
    expect(importRowsOf(new CsvText(csv))).toEqual({
      rows: [
        { sku: 'A', name: 'a, "big" one', priceMinor: 100 },
        { sku: 'B', onHand: 7 },
      ],
      lines: [2, 3],
    });
  });

  it("names each CSV error's line in the file (the header is line 1)", () => {
    expect(errorsOf(() => importRowsOf(new CsvText('sku,name,onHand\nA,,1\n\nB,"b\nc",many\n')))).toEqual([
      { field: 'items[1].onHand', message: expect.any(String), line: 4 },
    ]);
    expect(errorsOf(() => importRowsOf(new CsvText('sku,colour\nA,red\n')))).toEqual([{ field: 'colour', message: expect.any(String), line: 1 }]);
    expect(errorsOf(() => importRowsOf({ items: [{ sku: 'A', onHand: -1 }] }))).toEqual([{ field: 'items[0].onHand', message: expect.any(String) }]);
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

describe('recordLines', () => {
  it('counts CRLF, LF and CR as one line each, inside quotes too; empty lines are no record', () => {
    expect(recordLines('\uFEFFh\r\nA,"x\r\ny"\r\n\r\n\r\nB\r\nC,"q\r\n\r\nr"\r\nD')).toEqual([1, 2, 6, 7, 10]);
    expect(recordLines('h\n\n\nA\nB\n\n')).toEqual([1, 4, 5]);
    expect(recordLines('h\rA,"x\ry"\r\rB\r')).toEqual([1, 2, 5]);
    expect(recordLines('h\nA,"say ""hi""\nthere",1\nB')).toEqual([1, 2, 4]);
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
