import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { useAdminToken } from './support/browser.js';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * The console's inventory and locations pages (API.md, "Operator console": Inventory, Locations,
 * an order's allocations) as an operator uses them, in a real Chromium against the built service;
 * everything found by its role and label. CONSOLE_SCREENSHOTS (npm run screenshots) also saves each
 * page at 1440 and 390 px.
 */
const h = useHarness({ RESERVATION_TTL_MS: '900000' });

const SHOTS = process.env.CONSOLE_SCREENSHOTS;
const OPERATOR = 'Ola Stock';
const PAGE_SIZE = 20; // src/console/web/views/inventory.ts and sku.ts

let userDir: string;
let context: BrowserContext;
let page: Page;
const cspErrors: string[] = [];

const prefix = `CAT${randomUUID().slice(0, 6)}`;
const catalogue = Array.from({ length: 24 }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
const lowSkus = [`${prefix}-LOW-A`, `${prefix}-LOW-B`, `${prefix}-LOW-C`];
const mug = uniqueSku('MUG'); // 12.50 USD, at default and wh-east
let split: string; // an order of 4 mugs: 2 from default, 2 from wh-east

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

const text = async (l: Locator) => (await l.innerText()).replace(/\s+/g, ' ').trim();

/** The rows of a table, each as its cells' texts (the header row has no td). */
async function rows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr: any) => [...tr.querySelectorAll('td')].map((td: any) => td.innerText.replace(/\s+/g, ' ').trim())));
}

async function waitForRows(what: string, table: Locator, test: (r: string[][]) => boolean): Promise<string[][]> {
  return waitFor(what, async () => {
    const r = await rows(table);
    return test(r) ? r : undefined;
  });
}

const region = (name: string) => page.getByRole('region', { name, exact: true });
const catalogueTable = () => region('Catalogue').getByRole('table');
const movementsTable = () => region('Movements').getByRole('table');
const stockTable = () => region('Stock').getByRole('table');

async function inventory(sku: string): Promise<any> {
  const res = await h.api.get(`/inventory/${sku}`);
  expect(res.status).toBe(200);
  return res.body;
}

async function movements(sku: string, limit = 1000): Promise<any[]> {
  const res = await h.api.admin('GET', `/admin/inventory/${sku}/movements?limit=${limit}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  for (const [id, name, priority] of [
    ['wh-east', 'Warehouse East', 10],
    ['store-lyon', 'Store Lyon', 20],
  ] as const)
    expect((await h.api.admin('PUT', `/admin/locations/${id}`, { name, priority, active: true })).status).toBe(200);
  const items = [
    ...catalogue.map((sku, i) => ({ sku, name: `Catalogue item ${i}`, priceMinor: 100 + i, currency: 'USD', onHand: 50 + i, lowStockThreshold: 3 })),
    ...lowSkus.map((sku) => ({ sku, name: `Running low ${sku.slice(-1)}`, priceMinor: 990, currency: 'EUR', onHand: 2, lowStockThreshold: 5 })),
  ];
  const imported = await h.api.admin('POST', '/admin/inventory/import', { items });
  expect(imported.status).toBe(200);
  expect(imported.body).toMatchObject({ created: items.length, updated: 0, unchanged: 0 });

  expect((await h.api.putSku(mug, 2, 1250)).status).toBe(200);
  expect((await h.api.admin('PUT', `/admin/inventory/${mug}/locations/wh-east`, { onHand: 5 })).status).toBe(200);
  const res = await h.api.order(randomUUID(), { customerId: 'c-split', items: [{ sku: mug, quantity: 4 }] });
  expect(res.status).toBe(201);
  split = res.body.id;
  expect(res.body.items[0].allocations).toEqual([
    { locationId: 'default', quantity: 2 },
    { locationId: 'wh-east', quantity: 2 },
  ]);

  userDir = mkdtempSync(join(tmpdir(), 'tcc-console-inventory-chromium-'));
  context = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1440, height: 900 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
}, 90_000);

afterAll(async () => {
  await context?.close();
  if (userDir) rmSync(userDir, { recursive: true, force: true });
});

describe('console: inventory and locations', () => {
  it('signs in with "Your name"', async () => {
    await page.goto(`${h.svc.url}/console`);
    await useAdminToken(page);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Your name').fill(OPERATOR);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Orders' }).waitFor();
    await page.getByText(`Signed in as ${OPERATOR}`).waitFor();
  });

  it('Locations: the list by priority; the form refuses bad input in words, adds a location and changes one, and the list follows', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Locations' }).click();
    await page.getByRole('heading', { name: 'Locations', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/locations');
    const table = region('Stock locations').getByRole('table');
    expect(await waitForRows('the locations', table, (r) => r.length === 3)).toEqual([
      ['default', 'Default', '0', 'Yes', 'Change'],
      ['wh-east', 'Warehouse East', '10', 'Yes', 'Change'],
      ['store-lyon', 'Store Lyon', '20', 'Yes', 'Change'],
    ]);
    await shot('locations-1440');

    const before = (await h.api.admin('GET', '/admin/locations')).body;
    await page.getByLabel('Location id').fill('pop up');
    await page.getByLabel('Name').fill('');
    await page.getByLabel('Priority').fill('1000001');
    await page.getByRole('button', { name: 'Save' }).click();
    const refused = await text(page.getByRole('alert'));
    expect(refused).toContain('Location id must be 1-64 characters of letters, digits and _ . : -');
    expect(refused).toContain('Name must be 1-200 characters.');
    expect(refused).toContain('Priority must be a whole number from 0 to 1000000.');
    expect((await h.api.admin('GET', '/admin/locations')).body).toEqual(before);

    await page.getByLabel('Location id').fill('pop-up');
    await page.getByLabel('Name').fill('Pop-up stand');
    await page.getByLabel('Priority').fill('5');
    await page.getByLabel('Active').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Added pop-up: Pop-up stand, priority 5, inactive.').waitFor();
    expect(await waitForRows('the new location in the list', table, (r) => r.length === 4)).toEqual([
      ['default', 'Default', '0', 'Yes', 'Change'],
      ['pop-up', 'Pop-up stand', '5', 'No', 'Change'],
      ['wh-east', 'Warehouse East', '10', 'Yes', 'Change'],
      ['store-lyon', 'Store Lyon', '20', 'Yes', 'Change'],
    ]);
    expect((await h.api.admin('GET', '/admin/locations')).body.data).toContainEqual({ id: 'pop-up', name: 'Pop-up stand', priority: 5, active: false });

    await page.getByRole('button', { name: 'Change store-lyon' }).click();
    expect(await page.getByLabel('Location id').inputValue()).toBe('store-lyon');
    expect(await page.getByLabel('Name').inputValue()).toBe('Store Lyon');
    expect(await page.getByLabel('Active').isChecked()).toBe(true);
    await page.getByLabel('Name').fill('Store Lyon Part-Dieu');
    await page.getByLabel('Priority').fill('1');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Changed store-lyon: Store Lyon Part-Dieu, priority 1, active.').waitFor();
    expect((await waitForRows('the changed location first after default', table, (r) => r[1]?.[0] === 'store-lyon')).map((r) => r[0])).toEqual(['default', 'store-lyon', 'pop-up', 'wh-east']);
    expect((await h.api.admin('GET', '/admin/locations')).body.data[1]).toEqual({ id: 'store-lyon', name: 'Store Lyon Part-Dieu', priority: 1, active: true });
  });

  it('Inventory lists SKUs (SKU, name, on hand, reserved, available) by SKU, pages, and "Low stock" filters it', async () => {
    const all = (await h.api.admin('GET', '/admin/inventory?limit=1000')).body.data as any[];
    expect(all.length).toBeGreaterThan(PAGE_SIZE);
    // The last column names the locations where the SKU is low, with their available.
    const lowAt = (i: any) => i.lowAt.map((id: string) => `${id} (${i.locations.find((l: any) => l.locationId === id).available})`).join(', ');
    const row = (i: any) => [`${i.sku}${i.lowStockThreshold > 0 && i.available <= i.lowStockThreshold ? ' low' : ''}`, i.name, String(i.onHand), String(i.reserved), String(i.available), lowAt(i)];

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Inventory' }).click();
    await page.getByRole('heading', { name: 'Inventory', exact: true }).waitFor();
    expect(await waitForRows('the first page', catalogueTable(), (r) => r.length === PAGE_SIZE)).toEqual(all.slice(0, PAGE_SIZE).map(row));
    const pages = region('Catalogue').getByRole('navigation', { name: 'Catalogue pages' });
    expect(await pages.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
    await shot('inventory-list-1440');
    await pages.getByRole('button', { name: 'Next page' }).click();
    expect(await waitForRows('the second page', catalogueTable(), (r) => r[0]?.[0] !== row(all[0])[0])).toEqual(all.slice(PAGE_SIZE, 2 * PAGE_SIZE).map(row));
    expect(await pages.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(all.length <= 2 * PAGE_SIZE);
    await pages.getByRole('button', { name: 'Previous page' }).click();
    expect(await waitForRows('the first page again', catalogueTable(), (r) => r[0]?.[0] === row(all[0])[0])).toEqual(all.slice(0, PAGE_SIZE).map(row));

    await page.getByLabel('Low stock').check();
    const low = await waitForRows('only the low SKUs', catalogueTable(), (r) => r.length === lowSkus.length);
    expect(low).toEqual(lowSkus.map((sku, i) => [`${sku} low`, `Running low ${'ABC'[i]}`, '2', '0', '2', 'default (2)']));
    expect(new URL(page.url()).search).toBe('?lowStock=true');
    expect(await pages.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.reload();
    expect(await page.getByLabel('Low stock').isChecked()).toBe(true);
    await waitForRows('the low SKUs after a reload', catalogueTable(), (r) => r.length === lowSkus.length);
    await page.getByLabel('Low stock').uncheck();
    await waitForRows('every SKU again', catalogueTable(), (r) => r.length === PAGE_SIZE);

    // Each SKU in the list links to its page.
    expect(await catalogueTable().getByRole('link', { name: catalogue[3], exact: true }).getAttribute('href')).toBe(`/console/inventory/${catalogue[3]}`);
    await catalogueTable().getByRole('link', { name: catalogue[3], exact: true }).click();
    await page.getByRole('heading', { name: `SKU ${catalogue[3]}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/inventory/${catalogue[3]}`);
    expect(await waitForRows('its stock', stockTable(), (r) => r.length === 1)).toEqual([['default', '53', '0', '0', '53']]);
  });

  it('the SKU lookup and "On hand" still work, and set the stock at default', async () => {
    await page.goto(`${h.svc.url}/console/inventory`);
    await page.getByLabel('SKU').fill('NO-SUCH-SKU');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('There is no SKU NO-SUCH-SKU').waitFor();
    await page.getByLabel('SKU').fill(lowSkus[0]);
    await page.getByRole('button', { name: 'Look up' }).click();
    expect(await page.getByLabel('On hand').inputValue()).toBe('2');
    await page.getByLabel('On hand').fill('40');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved: ${lowSkus[0]} has 40 on hand, 40 available.`).waitFor();
    expect(await inventory(lowSkus[0])).toMatchObject({ onHand: 40, priceMinor: 990, currency: 'EUR' });
    // No longer low: the list follows.
    await page.getByLabel('Low stock').check();
    await waitForRows('two low SKUs', catalogueTable(), (r) => r.length === 2 && r[0][0] === `${lowSkus[1]} low`);
    const set = (await movements(lowSkus[0]))[0];
    expect(set).toMatchObject({ kind: 'set', locationId: 'default', delta: 38, onHandAfter: 40, actor: 'console', operator: OPERATOR });
  });

  it("a SKU's page: its stock per location, an adjustment recorded as a movement by the console and its operator, a refusal in words", async () => {
    await page.goto(`${h.svc.url}/console/inventory/${mug}`);
    await page.getByRole('heading', { name: `SKU ${mug}` }).waitFor();
    expect(await waitForRows('stock per location', stockTable(), (r) => r.length === 2)).toEqual([
      ['default', '2', '2', '0', '0'],
      ['wh-east', '5', '2', '0', '3'],
    ]);
    const figures = await text(region('Stock'));
    expect(figures).toContain('Price 12.50 USD');
    expect(figures).toContain('On hand 7');
    expect(figures).toContain('Reserved 4');
    expect(figures).toContain('Available 3');
    expect(await page.getByLabel('Reason').locator('option').evaluateAll((os) => os.map((o: any) => o.value))).toEqual(['received', 'returned', 'damaged', 'lost', 'correction', 'cycle_count']);
    // Every location may take stock, those holding the SKU first.
    expect(await page.getByLabel('Location').locator('option').evaluateAll((os) => os.map((o: any) => o.value))).toEqual(['default', 'wh-east', 'store-lyon', 'pop-up']);

    await page.getByLabel('Location').selectOption('wh-east');
    await page.getByLabel('Delta').fill('12');
    await page.getByLabel('Reason').selectOption('received');
    await page.getByLabel('Reference').fill('PO-1042');
    await page.getByRole('button', { name: 'Adjust' }).click();
    await page.getByText('Adjusted: +12 at wh-east (Received); on hand there is now 17.').waitFor();
    expect(await rows(stockTable())).toEqual([
      ['default', '2', '2', '0', '0'],
      ['wh-east', '17', '2', '0', '15'],
    ]);
    const first = await waitForRows('the adjustment on top', movementsTable(), (r) => r[0]?.[2] === 'adjustment');
    expect(first[0].slice(1)).toEqual(['wh-east', 'adjustment', '+12', '17', 'Received', 'PO-1042', `console (${OPERATOR})`]);
    expect(first[0][0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const [movement] = await movements(mug, 1);
    expect(movement).toMatchObject({ sku: mug, locationId: 'wh-east', kind: 'adjustment', delta: 12, onHandAfter: 17, reason: 'received', reference: 'PO-1042', actor: 'console', operator: OPERATOR });
    expect(first[0][0]).toBe(movement.at.slice(0, 19).replace('T', ' '));
    await shot('sku-adjusted-1440');

    // Below what orders hold at default: refused in words, nothing changed.
    const count = (await movements(mug)).length;
    await page.getByLabel('Location').selectOption('default');
    await page.getByLabel('Delta').fill('-1');
    await page.getByLabel('Reason').selectOption('damaged');
    await page.getByRole('button', { name: 'Adjust' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not adjusted: default has 2 on hand and 2 reserved by orders, so on hand cannot go down by 1' }).waitFor();
    expect((await inventory(mug)).locations[0]).toMatchObject({ locationId: 'default', onHand: 2, reserved: 2 });
    expect(await movements(mug)).toHaveLength(count);

    await page.getByLabel('Delta').fill('0');
    await page.getByRole('button', { name: 'Adjust' }).click();
    await page.getByRole('alert').filter({ hasText: 'Delta must be a whole number from -1000000000 to 1000000000, not 0.' }).waitFor();
    expect(await movements(mug)).toHaveLength(count);
  });

  it("a SKU's Movements, newest first, page by page", async () => {
    for (let i = 1; i <= 24; i++) {
      const res = await h.api.admin('POST', `/admin/inventory/${mug}/adjustments`, { locationId: 'wh-east', delta: i % 2 ? i : -1, reason: 'cycle_count', reference: `count-${i}` });
      expect(res.status).toBe(201);
    }
    const all = await movements(mug);
    expect(all.length).toBeGreaterThan(PAGE_SIZE);
    const cells = (m: any) => [m.at.slice(0, 19).replace('T', ' '), m.locationId, m.kind, m.delta > 0 ? `+${m.delta}` : String(m.delta), String(m.onHandAfter), m.reason === 'cycle_count' ? 'Cycle count' : m.reason === 'received' ? 'Received' : '—', m.reference ?? '—', m.operator ? `${m.actor} (${m.operator})` : m.actor];

    await page.reload();
    const first = await waitForRows('the newest movements', movementsTable(), (r) => r.length === PAGE_SIZE);
    expect(first).toEqual(all.slice(0, PAGE_SIZE).map(cells));
    expect(first[0][6]).toBe('count-24');
    const pages = page.getByRole('navigation', { name: 'Movement pages' });
    expect(await pages.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
    await pages.getByRole('button', { name: 'Next page' }).click();
    const second = await waitForRows('the older movements', movementsTable(), (r) => r[0]?.[6] !== 'count-24');
    expect(second).toEqual(all.slice(PAGE_SIZE, 2 * PAGE_SIZE).map(cells));
    expect(second.at(-1)?.slice(2, 5)).toEqual(['set', '+2', '2']); // the oldest: the first stock set at default
    await pages.getByRole('button', { name: 'Previous page' }).click();
    expect(await waitForRows('the newest again', movementsTable(), (r) => r[0]?.[6] === 'count-24')).toEqual(first);
  });

  it('a SKU that does not exist, or is malformed, shows a console page saying so, never JSON', async () => {
    for (const [path, status, says] of [
      ['/console/inventory/NO-SUCH-SKU', 200, 'There is no SKU NO-SUCH-SKU.'],
      ['/console/inventory/bad%20sku', 404, 'There is no SKU bad sku'],
    ] as const) {
      const res = await page.goto(`${h.svc.url}${path}`);
      expect(res?.status()).toBe(status);
      expect(res?.headers()['content-type']).toMatch(/text\/html/);
      await page.getByRole('heading', { name: 'SKU not found' }).waitFor();
      await page.getByRole('alert').filter({ hasText: says }).waitFor();
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Inventory' }).waitFor();
    }
  });

  it("an order's page shows each item's allocations (location and quantity)", async () => {
    await page.goto(`${h.svc.url}/console/orders/${split}`);
    const details = region('Details');
    await details.getByText('TRY_SUCCESS', { exact: true }).waitFor();
    const items = await rows(details.getByRole('table'));
    expect(items).toEqual([[mug, '4', '12.50 USD', '50.00 USD', 'default: 2, wh-east: 2']]);
    await details.getByRole('link', { name: mug }).click();
    await page.getByRole('heading', { name: `SKU ${mug}` }).waitFor();
  });

  it('at 390 px the inventory, SKU and locations pages fit without sideways scrolling; wide tables scroll inside their own box', async () => {
    const pages: [string, string, () => Promise<unknown>][] = [
      ['inventory-list', '/console/inventory', () => waitForRows('the list', catalogueTable(), (r) => r.length === PAGE_SIZE)],
      ['sku', `/console/inventory/${mug}`, () => waitForRows('the movements', movementsTable(), (r) => r.length === PAGE_SIZE)],
      ['locations', '/console/locations', () => waitForRows('the locations', region('Stock locations').getByRole('table'), (r) => r.length === 4)],
    ];
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const [name, path, ready] of pages) {
        await page.goto(`${h.svc.url}${path}`);
        await ready();
        await shot(`${name}-${width}`);
        const fit = await page.evaluate(() => {
          const doc = (globalThis as any).document;
          const wraps = [...doc.querySelectorAll('.table-wrap')].map((w: any) => ({ right: w.getBoundingClientRect().right, overflow: (globalThis as any).getComputedStyle(w).overflowX, scroll: w.scrollWidth, client: w.clientWidth }));
          const fields = [...doc.querySelectorAll('main input, main select, main button')].filter((e: any) => !e.closest('.table-wrap')).map((e: any) => e.getBoundingClientRect().right);
          return { scroll: doc.documentElement.scrollWidth, wraps, fields };
        });
        expect({ name, width, scroll: fit.scroll }).toEqual({ name, width, scroll: width });
        for (const right of fit.fields) expect(right).toBeLessThanOrEqual(width);
        for (const w of fit.wraps) {
          expect(w.right).toBeLessThanOrEqual(width);
          expect(w.overflow).toBe('auto');
        }
        // On a phone each movement is a card that shows its change, its reason and who made it.
        if (name === 'sku' && width === 390) {
          const card = movementsTable().locator('tbody tr').first();
          for (const label of ['Delta', 'Reason', 'By']) {
            const box = await card.locator(`td[data-label="${label}"]`).boundingBox();
            expect({ label, right: box!.x + box!.width <= width, shown: box!.width > 0 }).toEqual({ label, right: true, shown: true });
          }
        }
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 60_000);

  it('the console broke no CSP rule', () => {
    expect(cspErrors).toEqual([]);
  });
});
