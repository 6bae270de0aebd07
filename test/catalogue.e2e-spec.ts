import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { expectProblem, expectValidation } from './support/problem.js';
import { rawRequest } from './support/raw-http.js';
import { stockDrift } from './support/stock.js';

/**
 * The catalogue over HTTP (API.md, "Catalogue"): the paged list of SKUs with its filters, and the
 * import — JSON or CSV, up to 10,000 rows and 1 MiB on this route only, all or nothing, a failing
 * row named, every on hand it changes an `import` movement.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });
const tag = randomUUID().slice(0, 6).toUpperCase();
const store = `store-${tag}`;

beforeAll(async () => {
  expect((await h.api.admin('PUT', `/admin/locations/${store}`, { name: 'Store', priority: 10, active: true })).status).toBe(200);
});

afterEach(async () => {
  expect(await stockDrift(h.db)).toEqual([]);
});

const importJson = (items: unknown[]) => h.api.admin('POST', '/admin/inventory/import', { items });
const importCsv = (text: string, type = 'text/csv') =>
  h.api.send('POST', '/admin/inventory/import', { raw: text, admin: true, headers: { 'content-type': type } });
const list = (query: string) => h.api.get(`/admin/inventory${query}`, true);

/** What a refused import must leave as it was: SKUs, stock rows and the ledger. */
async function stockPrint(): Promise<unknown> {
  return h.db.query(`SELECT (SELECT count(*) || md5(coalesce(string_agg(row_to_json(s)::text, ',' ORDER BY sku, location_id), '')) FROM stock s) AS stock,
                            (SELECT count(*) || ':' || coalesce(max(id), 0) FROM stock_movements) AS ledger,
                            (SELECT count(*) || md5(coalesce(string_agg(row_to_json(k)::text, ',' ORDER BY sku), '')) FROM skus k) AS skus`);
}

/** Every page of a listing, following nextCursor. */
async function allPages(query: string): Promise<{ skus: string[]; pages: number }> {
  const skus: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: { data: { sku: string }[]; nextCursor: string | null } } = await list(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    skus.push(...res.body.data.map((i) => i.sku));
    cursor = res.body.nextCursor;
    pages++;
  } while (cursor);
  return { skus, pages };
}

describe('import', () => {
  it('JSON: creates and updates SKUs and their stock per location; every on-hand change is an import movement', async () => {
    const a = `IMP-${tag}-A`;
    const b = `IMP-${tag}-B`;
    expect((await h.api.putSku(b, 3, 900, 'EUR')).status).toBe(200);
    const res = await importJson([
      { sku: a, name: 'Mug', priceMinor: 1250, currency: 'USD', onHand: 10, lowStockThreshold: 2 },
      { sku: a, locationId: store, onHand: 4, safetyStock: 1 },
      { sku: b, onHand: 8 },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 1, updated: 1, unchanged: 0, onHandDelta: 19 });
    const inv = (await h.api.get(`/inventory/${a}`)).body;
    expect(inv).toEqual({
      sku: a, name: 'Mug', priceMinor: 1250, currency: 'USD', onHand: 14, reserved: 0, safetyStock: 1, available: 13, lowStockThreshold: 2,
      locations: [
        { locationId: 'default', onHand: 10, reserved: 0, safetyStock: 0, available: 10, active: true },
        { locationId: store, onHand: 4, reserved: 0, safetyStock: 1, available: 3, active: true },
      ],
    });
    expect((await h.api.get(`/inventory/${b}`)).body).toMatchObject({ priceMinor: 900, currency: 'EUR', onHand: 8 });
    const moves = (await h.api.get(`/admin/inventory/${b}/movements`, true)).body.data;
    expect(moves[0]).toMatchObject({ kind: 'import', delta: 5, onHandAfter: 8, actor: 'admin' });
    const aMoves = (await h.api.get(`/admin/inventory/${a}/movements`, true)).body.data;
    expect(aMoves.map((m: { kind: string; locationId: string; delta: number }) => [m.kind, m.locationId, m.delta]).sort()).toEqual([
      ['import', 'default', 10],
      ['import', store, 4],
    ]);
    // The same import again changes no on hand: no movement.
    expect((await importJson([{ sku: b, onHand: 8 }])).body).toEqual({ created: 0, updated: 0, unchanged: 1, onHandDelta: 0 });
    expect((await h.api.get(`/admin/inventory/${b}/movements`, true)).body.data).toHaveLength(2);
  });

  it('CSV: a header naming any of the fields, RFC 4180 quoting, an empty field is a value not given', async () => {
    const a = `CSV-${tag}-A`;
    const b = `CSV-${tag}-B`;
    const csv = `\uFEFFsku,name,priceMinor,currency,locationId,onHand,safetyStock,lowStockThreshold\r\n` +
      `${a},"Mug, large ""XL""",1250,USD,,6,,3\r\n` +
      `${a},,,,${store},2,1,\r\n` +
      `${b},"two\nlines",99,EUR,,,,\r\n`;
    const res = await importCsv(csv, 'text/csv; charset=utf-8');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 2, updated: 0, unchanged: 0, onHandDelta: 8 });
    expect((await h.api.get(`/inventory/${a}`)).body).toMatchObject({ name: 'Mug, large "XL"', priceMinor: 1250, onHand: 8, safetyStock: 1, lowStockThreshold: 3 });
    expect((await h.api.get(`/inventory/${b}`)).body).toMatchObject({ name: 'two\nlines', priceMinor: 99, currency: 'EUR', onHand: 0, locations: [{ locationId: 'default', onHand: 0 }] });
  });

  it('a failing row names itself and nothing is imported', async () => {
    const a = `BAD-${tag}-A`;
    expect((await h.api.putSku(a, 5)).status).toBe(200);
    const held = await h.api.order(randomUUID(), { customerId: 'c-imp', items: [{ sku: a, quantity: 4 }] });
    expect(held.status).toBe(201);
    const fresh = (i: number) => ({ sku: `BAD-${tag}-N${i}`, priceMinor: 100, currency: 'USD', onHand: 3 });
    const rows = Array.from({ length: 20 }, (_, i) => fresh(i));
    const before = await stockPrint();

    const cases: [unknown[], RegExp][] = [
      [[...rows.slice(0, 17), { ...fresh(17), onHand: -1 }, ...rows.slice(18)], /^items\[17\]\.onHand$/],
      [[...rows.slice(0, 3), { ...fresh(3), colour: 'red' }], /^items\[3\]\.colour$/],
      [[...rows.slice(0, 5), { sku: `BAD-${tag}-NEW`, onHand: 1 }], /^items\[5\]\.priceMinor$/],
      [[...rows.slice(0, 5), { sku: `BAD-${tag}-NEW2`, priceMinor: 5, onHand: 1 }], /^items\[5\]\.currency$/],
      [[...rows.slice(0, 2), { ...fresh(2), locationId: 'nowhere' }], /^items\[2\]\.locationId$/],
      [[...rows.slice(0, 2), { ...fresh(0), onHand: 9 }], /^items\[2\]\.locationId$/],
      [[...rows.slice(0, 2), { ...fresh(0), priceMinor: 101, locationId: store }], /^items\[2\]\.priceMinor$/],
      [[{ sku: 'bad sku' }], /^items\[0\]\.sku$/],
      [[], /^items$/],
    ];
    for (const [items, field] of cases) expectValidation(await importJson(items), field);
    expectValidation(await importJson(Array.from({ length: 10_001 }, (_, i) => ({ sku: `X${i}` }))), /^items$/);
    expectValidation(await h.api.admin('POST', '/admin/inventory/import', { items: rows, extra: 1 }), /^extra$/);

    // On hand below what is reserved: STOCK_BELOW_RESERVED naming the SKU and location.
    const below = await importJson([...rows, { sku: a, onHand: 3 }]);
    expectProblem(below, 409, 'STOCK_BELOW_RESERVED');
    expect(below.body).toMatchObject({ sku: a, locationId: 'default' });

    // CSV: the same rules, a column not listed is VALIDATION_FAILED, a bad value names its row.
    const header = 'sku,priceMinor,currency,onHand';
    const body = rows.map((r) => `${r.sku},${r.priceMinor},${r.currency},${r.onHand}`);
    expectValidation(await importCsv(`sku,priceMinor,colour\n${a},1,red\n`), /^colour$/);
    expectValidation(await importCsv(`name,onHand\nx,1\n`), /^sku$/);
    expectValidation(await importCsv(`${header}\n${body.slice(0, 17).join('\n')}\n${rows[17].sku},100,USD,lots\n`), /^items\[17\]\.onHand$/);
    expectValidation(await importCsv(`${header}\n${body.slice(0, 4).join('\n')}\n${rows[4].sku},100,USD,-3\n`), /^items\[4\]\.onHand$/);
    expectValidation(await importCsv(`${header}\n${rows[0].sku},"100,USD,1\n`));
    expectValidation(await importCsv(`${header}\n${rows[0].sku},100\n`));
    expectValidation(await importCsv(`${header}\n${rows[0].sku},100,USD,1\u0000\n`), /^items\[0\]\.onHand$/);
    expectValidation(await importCsv(''));
    expect(await stockPrint()).toEqual(before);
    expect((await h.api.post(`/orders/${held.body.id}/cancel`)).status).toBe(200);
  });

  it('10,000 rows in one import (bodies up to 1 MiB on this route); over 1 MiB is 413 before the body is read', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => `BULK-${tag}-${String(i).padStart(5, '0')},${100 + i},USD,${i % 50}`);
    const csv = `sku,priceMinor,currency,onHand\n${rows.join('\n')}\n`;
    expect(Buffer.byteLength(csv)).toBeGreaterThan(64 * 1024);
    const res = await importCsv(csv);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 10_000, updated: 0, unchanged: 0, onHandDelta: Array.from({ length: 10_000 }, (_, i) => i % 50).reduce((s, v) => s + v, 0) });
    const [count] = await h.db.query<{ skus: number; moves: number; total: number }>(
      `SELECT (SELECT count(*)::int FROM skus WHERE sku LIKE $1) AS skus,
              (SELECT count(*)::int FROM stock_movements WHERE sku LIKE $1 AND kind = 'import') AS moves,
              (SELECT sum(on_hand)::int FROM stock WHERE sku LIKE $1) AS total`,
      [`BULK-${tag}-%`],
    );
    const total = Array.from({ length: 10_000 }, (_, i) => i % 50).reduce((s, v) => s + v, 0);
    expect(count).toEqual({ skus: 10_000, moves: 10_000 - 200, total });
    // The same as JSON sets every on hand to 1: those at 1 already are unchanged.
    const json = await importJson(Array.from({ length: 10_000 }, (_, i) => ({ sku: `BULK-${tag}-${String(i).padStart(5, '0')}`, onHand: 1 })));
    expect(json.status).toBe(200);
    expect(json.body).toEqual({ created: 0, updated: 9_800, unchanged: 200, onHandDelta: 10_000 - total });

    // Other routes keep 64 KiB.
    const big = await h.api.send('PUT', `/admin/inventory/BULK-${tag}-00001`, { raw: JSON.stringify({ priceMinor: 1, currency: 'USD', onHand: 1, name: 'x'.repeat(70_000) }), admin: true });
    expectProblem(big, 413, 'PAYLOAD_TOO_LARGE');
    // A declared Content-Length over 1 MiB is refused at once, before its body arrives.
    const before = await stockPrint();
    const head = `POST /admin/inventory/import HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/csv\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: ${1024 * 1024 + 1}\r\n\r\nsku\n`;
    const answer = await rawRequest(h.svc.url, head, { timeoutMs: 3000 });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(answer.ms).toBeLessThan(1000);
    // And a body that is really over 1 MiB.
    const huge = await importCsv(`sku,name\n${Array.from({ length: 9000 }, (_, i) => `H${i},${'n'.repeat(120)}`).join('\n')}\n`);
    expectProblem(huge, 413, 'PAYLOAD_TOO_LARGE');
    expect(await stockPrint()).toEqual(before);
  }, 120_000);
});

describe('the catalogue list', () => {
  const p = `CAT-${tag}`;
  beforeAll(async () => {
    const items = [
      { sku: `${p}-A`, priceMinor: 1, currency: 'USD', onHand: 10, lowStockThreshold: 5 },
      { sku: `${p}-B`, priceMinor: 1, currency: 'USD', onHand: 3, lowStockThreshold: 5 },
      { sku: `${p}-C`, priceMinor: 1, currency: 'USD', onHand: 0 },
      { sku: `${p}-D`, priceMinor: 1, currency: 'USD', onHand: 5, lowStockThreshold: 5 },
      { sku: `${p}-D`, locationId: store, onHand: 7 },
      { sku: `${p}-E`, priceMinor: 1, currency: 'USD', onHand: 6, safetyStock: 2, lowStockThreshold: 4 },
    ];
    expect((await importJson(items)).status).toBe(200);
  });

  it('pages by sku with a prefix; each entry is the inventory JSON', async () => {
    const all = await allPages(`?skuPrefix=${p}&limit=2`);
    expect(all).toEqual({ skus: [`${p}-A`, `${p}-B`, `${p}-C`, `${p}-D`, `${p}-E`], pages: 3 });
    const one = await list(`?skuPrefix=${p}-D`);
    // The inventory JSON, and where the SKU is low.
    expect(one.body).toEqual({ data: [{ ...(await h.api.get(`/inventory/${p}-D`)).body, lowAt: expect.any(Array) }], nextCursor: null });
    const everything = await allPages('?limit=1000');
    const sorted = [...everything.skus].sort((x, y) => (Buffer.from(x) < Buffer.from(y) ? -1 : 1));
    expect(everything.skus).toEqual(sorted);
    expect(everything.skus).toEqual(expect.arrayContaining(all.skus));
  });

  it('lowStock keeps SKUs with a threshold above 0 and available at or below it; locationId keeps those with a row there', async () => {
    expect((await allPages(`?skuPrefix=${p}&lowStock=true&limit=1`)).skus).toEqual([`${p}-B`, `${p}-E`]);
    expect((await allPages(`?skuPrefix=${p}&lowStock=false`)).skus).toHaveLength(5);
    expect((await allPages(`?skuPrefix=${p}&locationId=${store}`)).skus).toEqual([`${p}-D`]);
    expect((await list(`?skuPrefix=${p}&locationId=nowhere`)).body).toEqual({ data: [], nextCursor: null });
    // A sale below the threshold puts A on the list.
    const order = await h.api.order(randomUUID(), { customerId: 'c-cat', items: [{ sku: `${p}-A`, quantity: 5 }] });
    expect(order.status).toBe(201);
    expect((await allPages(`?skuPrefix=${p}&lowStock=true`)).skus).toEqual([`${p}-A`, `${p}-B`, `${p}-E`]);
    expect((await h.api.post(`/orders/${order.body.id}/cancel`)).status).toBe(200);
  });

  it('refuses a bad query and a cursor it did not issue; needs the admin token', async () => {
    for (const q of ['?limit=0', '?limit=1001', '?lowStock=yes', '?locationId=a%20b', '?skuPrefix=a%20b', '?skuPrefix=', '?what=1']) expectValidation(await list(q));
    const page = await list(`?skuPrefix=${p}&limit=1`);
    const [payload, sig] = (page.body.nextCursor as string).split('.');
    expectValidation(await list(`?cursor=${Buffer.from(JSON.stringify([`${p}-C`])).toString('base64url')}.${sig}`), /^cursor$/);
    expectValidation(await list(`?cursor=${payload}.${'A'.repeat(43)}`), /^cursor$/);
    expectProblem(await h.api.get('/admin/inventory'), 401, 'UNAUTHORIZED');
    expectProblem(await h.api.send('POST', '/admin/inventory/import', { body: { items: [{ sku: 'x' }] } }), 401, 'UNAUTHORIZED');
  });
});
