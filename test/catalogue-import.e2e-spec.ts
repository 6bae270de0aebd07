import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { expectProblem, expectValidation, fingerprint } from './support/problem.js';
import { Receiver, startReceiver } from './support/receiver.js';
import { stockDrift } from './support/stock.js';

/**
 * What an import answers (API.md, "Catalogue"): how many SKUs it created, updated (any value
 * changed, the name included) and left unchanged (every given value equal), and `onHandDelta`, the
 * sum of the movements it wrote; `?dryRun=true` judges the same and answers the same, changing
 * nothing (no movement, no webhook, no low-stock flag); a CSV's errors name the row's line in the
 * file (the header is line 1) besides `items[i]`.
 */
const h = useHarness();
const tag = randomUUID().slice(0, 6).toUpperCase();
const sku = (name: string) => `IMPA-${tag}-${name}`;
const store = `store-${tag}`.toLowerCase();
let receiver: Receiver;

const importJson = (items: unknown[], query = '') => h.api.admin('POST', `/admin/inventory/import${query}`, { items });
const importCsv = (text: string, query = '') =>
  h.api.send('POST', `/admin/inventory/import${query}`, { raw: text, admin: true, headers: { 'content-type': 'text/csv' } });

/** Everything a dry run must leave as it was: SKUs (low-stock flags included), stock, the ledger, the outbox. */
async function state(): Promise<unknown> {
  const [row] = await h.db.query(`SELECT (SELECT md5(string_agg(row_to_json(s)::text, ',' ORDER BY sku, location_id)) FROM stock s) AS stock,
                                         (SELECT count(*) || ':' || coalesce(max(id), 0) FROM stock_movements) AS ledger`);
  const print = await fingerprint(h.db);
  delete print.job_state; // the periodic jobs' own state moves on its own
  return { ...row, ...print };
}

beforeAll(async () => {
  receiver = await startReceiver();
  expect((await h.api.admin('PUT', `/admin/webhooks/low-${tag}`.toLowerCase(), { url: receiver.url, events: ['inventory.low_stock'], secret: receiver.secret })).status).toBe(200);
  expect((await h.api.admin('PUT', `/admin/locations/${store}`, { name: 'Store', priority: 10, active: true })).status).toBe(200);
  const seed = await importJson([
    { sku: sku('SAME'), name: 'Same', priceMinor: 100, currency: 'USD', onHand: 5, lowStockThreshold: 2 },
    { sku: sku('NAME'), name: 'Old name', priceMinor: 100, currency: 'USD', onHand: 5 },
    { sku: sku('STOCK'), name: 'Stock', priceMinor: 100, currency: 'USD', onHand: 9, lowStockThreshold: 3 },
    { sku: sku('STOCK'), locationId: store, onHand: 4 },
  ]);
  expect(seed.body).toEqual({ created: 3, updated: 0, unchanged: 0, onHandDelta: 23 });
});

afterAll(async () => {
  await receiver?.close();
});

afterEach(async () => {
  expect(await stockDrift(h.db)).toEqual([]);
});

describe('the answer', () => {
  const items = () => [
    { sku: sku('SAME'), name: 'Same', priceMinor: 100, currency: 'USD', onHand: 5 }, // every given value equal
    { sku: sku('NAME'), name: 'New name' }, // only the name changes
    { sku: sku('STOCK'), onHand: 1 }, // 9 → 1 at default: falls to low stock (threshold 3)
    { sku: sku('STOCK'), locationId: store, onHand: 0, safetyStock: 0 }, // 4 → 0
    { sku: sku('NEW'), priceMinor: 7, currency: 'EUR', onHand: 6 },
  ];

  it('dry run: the same counts as the import, and nothing changes (no movement, no webhook, no low-stock flag)', async () => {
    const before = await state();
    const dry = await importJson(items(), '?dryRun=true');
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ created: 1, updated: 2, unchanged: 1, onHandDelta: -12 + 6 });
    expect(await state()).toEqual(before);
    expect((await h.api.get(`/inventory/${sku('NEW')}`)).status).toBe(404);
    // dryRun=false is the import itself.
    const real = await importJson(items(), '?dryRun=false');
    expect(real.status).toBe(200);
    expect(real.body).toEqual(dry.body);
    const [ledger] = await h.db.query<{ sum: number }>(`SELECT sum(delta)::int AS sum FROM stock_movements WHERE kind = 'import' AND id > $1`, [
      Number(String((before as { ledger: string }).ledger).split(':')[1]),
    ]);
    expect(ledger.sum).toBe(real.body.onHandDelta);
    const [flag] = await h.db.query<{ low_stock: boolean }>(`SELECT low_stock FROM skus WHERE sku = $1`, [sku('STOCK')]);
    expect(flag.low_stock).toBe(true);
    const [outbox] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE sku = $1`, [sku('STOCK')]);
    expect(outbox.n).toBe(1);
    // Again: everything unchanged.
    expect((await importJson(items())).body).toEqual({ created: 0, updated: 0, unchanged: 4, onHandDelta: 0 });
  });

  it('dry run: refusals are the import\'s own, and change nothing', async () => {
    const before = await state();
    expectValidation(await importJson([{ sku: sku('NEW2'), onHand: 1 }], '?dryRun=true'), /^items\[0\]\.priceMinor$/);
    expectValidation(await importJson([{ sku: sku('SAME'), locationId: 'nowhere', onHand: 1 }], '?dryRun=true'), /^items\[0\]\.locationId$/);
    expectValidation(await importJson([{ sku: sku('SAME') }], '?dryRun=yes'), /^dryRun$/);
    expectValidation(await importJson([{ sku: sku('SAME') }], '?dry=true'), /^dry$/);
    expect(await state()).toEqual(before);
  });
});

describe('CSV rows are records, not lines', () => {
  // 10,000 rows at most: counted as records, so empty lines and line breaks inside quoted fields
  // neither cut an import short (it was answered 200 with the rows before line 10,002) nor let more through.
  const rows = (n: number, name: (i: number) => string) => Array.from({ length: n }, (_, i) => `${sku(`R${i}`)},${name(i)},1,USD,1`);
  it('6,000 rows, each followed by an empty line, and 5,500 with a name over two lines: every row read', async () => {
    const spaced = `sku,name,priceMinor,currency,onHand\n${rows(6000, (i) => `n${i}`).join('\n\n')}\n`;
    expect(spaced.split('\n').length).toBeGreaterThan(10_002);
    const a = await importCsv(spaced, '?dryRun=true');
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ created: 6000 });
    const quoted = `sku,name,priceMinor,currency,onHand\r\n${rows(5500, (i) => `"first ${i}\r\nsecond"`).join('\r\n')}\r\n`;
    const b = await importCsv(quoted, '?dryRun=true');
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ created: 5500 });
  });

  it('10,001 rows spread over empty lines are refused, changing nothing', async () => {
    const before = await state();
    const res = await importCsv(`sku,name,priceMinor,currency,onHand\n${rows(10_001, (i) => `n${i}`).join('\n\n')}\n`);
    expectValidation(res, /^items$/);
    expect(await state()).toEqual(before);
  });
});

describe('CSV errors name the line', () => {
  it('a bad value in the row on line 8 (a quoted name spanning two lines, an empty line, CRLF): items[4], line 8', async () => {
    const csv = [
      'sku,name,priceMinor,currency,onHand', // 1
      `${sku('C0')},"two`, // 2
      `lines",1,USD,1`, // 3
      `${sku('C1')},,1,USD,1`, // 4
      '', // 5: no row
      `${sku('C2')},,1,USD,1`, // 6
      `${sku('C3')},,1,USD,1`, // 7
      `${sku('C4')},,1,USD,lots`, // 8
      `${sku('C5')},,1,USD,-1`, // 9
    ].join('\r\n');
    const res = await importCsv(`${csv}\r\n`);
    expectValidation(res);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'items[4].onHand', line: 8 })]));
    expect(res.body.detail).toMatch(/items\[4\]\.onHand \(line 8\)/);
  });

  it('the line of a row the database refuses, of a row that repeats another, of a header', async () => {
    const rows = ['sku,priceMinor,currency,onHand,locationId', `${sku('D0')},1,USD,1,`, '', `${sku('D1')},1,USD,1,nowhere`];
    let res = await importCsv(`${rows.join('\n')}\n`);
    expectValidation(res, /^items\[1\]\.locationId$/);
    expect(res.body.errors[0]).toMatchObject({ field: 'items[1].locationId', line: 4 });
    res = await importCsv(`sku,onHand\n${sku('D2')},1\n${sku('D2')},2\n`);
    expect(res.body.errors[0]).toMatchObject({ field: 'items[1].locationId', line: 3 });
    res = await importCsv(`sku,onHand\n"${sku('D3')}",1\n`, '?dryRun=true');
    expect(res.body.errors[0]).toMatchObject({ field: 'items[0].priceMinor', line: 2 });
    res = await importCsv(`sku,colour\n${sku('D4')},red\n`);
    expect(res.body.errors[0]).toMatchObject({ field: 'colour', line: 1 });
    // JSON rows have no line.
    res = await importJson([{ sku: sku('D5'), onHand: 1 }]);
    expect(res.body.errors[0]).toEqual({ field: 'items[0].priceMinor', message: expect.any(String) });
  });

  it('STOCK_BELOW_RESERVED names the row and its line', async () => {
    const held = await h.api.order(randomUUID(), { customerId: 'c-line', items: [{ sku: sku('SAME'), quantity: 3 }] });
    expect(held.status).toBe(201);
    const res = await importCsv(`sku,onHand\n\n${sku('SAME')},1\n`);
    expectProblem(res, 409, 'STOCK_BELOW_RESERVED');
    expect(res.body).toMatchObject({ sku: sku('SAME'), locationId: 'default', line: 3 });
    expect((await h.api.post(`/orders/${held.body.id}/cancel`)).status).toBe(200);
  });
});
