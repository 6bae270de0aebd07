import { randomUUID } from 'node:crypto';
import type { Answer } from './support/http.js';
import { useHarness } from './support/harness.js';
import { expectValidation } from './support/problem.js';
import { stockDrift } from './support/stock.js';

/**
 * Writers that may create the same row at the same moment (API.md, "Catalogue": imports that
 * create the same new SKU at once both succeed, one creates it). Many requests are sent at once, in
 * both orders of arrival — JSON and CSV imports naming the same new SKUs in opposite orders, a
 * `PUT /admin/inventory/{sku}` for one of them, stock sets and adjustments at a new location, a
 * location and a webhook put twice — and none may answer 500; each SKU exists once, and its stock
 * is the sum of its ledger.
 */
const h = useHarness();
const tag = randomUUID().slice(0, 6).toUpperCase();

const importJson = (items: unknown[]) => h.api.admin('POST', '/admin/inventory/import', { items });
const importCsv = (rows: string[]) =>
  h.api.send('POST', '/admin/inventory/import', { raw: `sku,priceMinor,currency,onHand\n${rows.join('\n')}\n`, admin: true, headers: { 'content-type': 'text/csv' } });

afterEach(async () => {
  expect(await stockDrift(h.db)).toEqual([]);
});

function statuses(answers: Answer[]): number[] {
  return answers.map((a) => a.status);
}

describe('imports creating the same new SKUs at once', () => {
  it('JSON and CSV, in opposite orders: every import 200, each SKU created exactly once', async () => {
    for (let round = 0; round < 8; round++) {
      const skus = [0, 1, 2, 3].map((i) => `RACE-${tag}-${round}-${i}`);
      const forward = skus.map((sku, i) => ({ sku, priceMinor: 100 + i, currency: 'USD', onHand: 5 }));
      const calls = [
        () => importJson(forward),
        () => importJson([...forward].reverse()),
        () => importCsv(skus.map((sku, i) => `${sku},${100 + i},USD,5`).reverse()),
        () => importCsv(skus.slice(1, 3).map((sku, i) => `${sku},${101 + i},USD,5`)),
        () => importJson([forward[3], forward[0]]),
      ];
      const order = round % 2 === 0 ? calls : [...calls].reverse();
      const answers = await Promise.all(order.map((call) => call()));
      expect(statuses(answers)).toEqual(answers.map(() => 200));
      const created = answers.reduce((sum, a) => sum + (a.body.created as number), 0);
      expect(created).toBe(skus.length);
      const [count] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM skus WHERE sku = ANY ($1)`, [skus]);
      expect(count.n).toBe(skus.length);
      for (const sku of skus) expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ onHand: 5, reserved: 0 });
    }
  }, 60_000);

  it('an import racing PUT /admin/inventory/{sku} and stock writers of the same new SKU: no 500', async () => {
    const store = `race-${tag}`.toLowerCase();
    for (let round = 0; round < 8; round++) {
      const sku = `PUT-${tag}-${round}`;
      const other = `PUT-${tag}-${round}-B`;
      const calls = [
        () => importJson([{ sku: other, priceMinor: 7, currency: 'USD', onHand: 1 }, { sku, priceMinor: 7, currency: 'USD', onHand: 3 }]),
        () => h.api.putSku(sku, 4, 7),
        () => importCsv([`${sku},7,USD,2`, `${other},7,USD,2`]),
        () => h.api.putSku(other, 6, 7),
        () => h.api.admin('PUT', `/admin/locations/${store}-${round}`, { name: 'Race', priority: 5, active: true }),
        () => h.api.admin('PUT', `/admin/locations/${store}-${round}`, { name: 'Race 2', priority: 6, active: true }),
      ];
      const answers = await Promise.all((round % 2 === 0 ? calls : [...calls].reverse()).map((call) => call()));
      // A refusal says which call it was and why, with the service's warnings and errors (a 503 was
      // seen once under the full suite's load and could not be made again alone).
      if (answers.some((a) => a.status !== 200)) {
        const why = answers.map((a, i) => ({ call: round % 2 === 0 ? i : calls.length - 1 - i, status: a.status, code: a.body?.code, detail: a.body?.detail }));
        const lines = h.svc.logs.filter((l) => /"level":(40|50)|503/.test(l)).slice(-20);
        throw new Error(`round ${round}: ${JSON.stringify(why)}\n${lines.join('\n')}`);
      }
      const [count] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM skus WHERE sku = ANY ($1)`, [[sku, other]]);
      expect(count.n).toBe(2);

      // The SKU exists now: a new location's stock row, created by an adjustment, a set and an import at once.
      const place = `${store}-${round}`;
      const stockCalls = [
        () => h.api.admin('POST', `/admin/inventory/${sku}/adjustments`, { locationId: place, delta: 2, reason: 'received' }),
        () => h.api.admin('PUT', `/admin/inventory/${sku}/locations/${place}`, { onHand: 9 }),
        () => importJson([{ sku, locationId: place, onHand: 4 }]),
        () => h.api.admin('POST', `/admin/inventory/${sku}/adjustments`, { locationId: place, delta: 1, reason: 'received' }),
      ];
      const stock = await Promise.all((round % 2 === 0 ? stockCalls : [...stockCalls].reverse()).map((call) => call()));
      expect(statuses(stock).sort()).toEqual([200, 200, 201, 201]);
    }
  }, 60_000);

  it('an import without a price racing the one that creates the SKU: 200 or VALIDATION_FAILED, never 500', async () => {
    for (let round = 0; round < 8; round++) {
      const sku = `NOPRICE-${tag}-${round}`;
      const calls = [() => importJson([{ sku, onHand: 2 }]), () => importJson([{ sku, priceMinor: 5, currency: 'EUR', onHand: 1 }])];
      const [stockOnly, creating] = await Promise.all(round % 2 === 0 ? calls.map((c) => c()) : calls.reverse().map((c) => c()).reverse());
      expect(creating.status).toBe(200);
      expect(creating.body.created).toBe(1);
      if (stockOnly.status !== 200) expectValidation(stockOnly, /^items\[0\]\.priceMinor$/);
      const inv = (await h.api.get(`/inventory/${sku}`)).body;
      expect(inv).toMatchObject({ priceMinor: 5, currency: 'EUR' });
    }
  }, 60_000);

  it('a SKU another transaction creates while the import waits for it: the import locks it and applies its rows', async () => {
    const sku = `WAIT-${tag}`;
    const other = await h.db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`INSERT INTO skus (sku, name, price_minor, currency) VALUES ($1, 'made elsewhere', 42, 'EUR')`, [sku]);
      await other.query(`INSERT INTO stock (sku, location_id, on_hand) VALUES ($1, 'default', 0)`, [sku]);
      // The import sees no such SKU, so it creates it — and waits for the transaction making it.
      const pending = importJson([{ sku, name: 'from the import', priceMinor: 7, currency: 'USD', onHand: 5 }]);
      await new Promise((r) => setTimeout(r, 500));
      await other.query('COMMIT');
      const res = await pending;
      expect(res.body).toEqual({ created: 0, updated: 1, unchanged: 0, onHandDelta: 5 });
    } finally {
      other.release();
    }
    expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ name: 'from the import', priceMinor: 7, currency: 'USD', onHand: 5 });
  });

  it('an import locks only the SKUs it changes: one held elsewhere but left as it is does not hold it up', async () => {
    const [same, changed] = [`LOCK-${tag}-SAME`, `LOCK-${tag}-CHANGED`];
    expect((await importJson([{ sku: same, priceMinor: 5, currency: 'USD', onHand: 4 }, { sku: changed, priceMinor: 5, currency: 'USD', onHand: 4 }])).status).toBe(200);
    const other = await h.db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM skus WHERE sku = $1 FOR NO KEY UPDATE', [same]);
      const res = await Promise.race([
        importJson([{ sku: same, priceMinor: 5, currency: 'USD', onHand: 4 }, { sku: changed, onHand: 9 }]),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the import waited for a SKU it does not change')), 15_000)),
      ]);
      expect(res.body).toEqual({ created: 0, updated: 1, unchanged: 1, onHandDelta: 5 });
    } finally {
      await other.query('ROLLBACK');
      other.release();
    }
  }, 30_000);

  it('webhooks put under one name at once: all 200, one endpoint', async () => {
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    for (let round = 0; round < 5; round++) {
      const name = `race-${tag}-${round}`.toLowerCase();
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => h.api.admin('PUT', `/admin/webhooks/${name}`, { url: `http://127.0.0.1:9/${i}`, events: ['order.confirmed'], secret })),
      );
      expect(statuses(answers)).toEqual(answers.map(() => 200));
    }
  });
});
