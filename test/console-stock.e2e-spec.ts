import { randomUUID } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { axe, openBrowser, pageWidth, shot, signIn, text, viewport, WIDTHS, type Browser } from './support/browser.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';

/**
 * "Stock by location" and "Taking a location offline" (API.md, "Operator console", third part), as
 * a stock manager with two warehouses and a store uses them, at 1440 and 390 px.
 */
const h = useHarness({ RESERVATION_TTL_MS: '900000' });

let b: Browser;
let page: Page;
const run = randomUUID().slice(0, 6).toUpperCase();
const spread = `ST${run}-LAMP`; // 200 at wh-east, 56 at wh-west, nothing at default: 256 on hand
const local = `ST${run}-MUG`; // 40 at default alone
const thin = `ST${run}-VASE`; // 300 at wh-east, 3 at the store: low at the store only
const loc = { east: `e${run}`.toLowerCase(), west: `w${run}`.toLowerCase(), store: `s${run}`.toLowerCase() };

const region = (name: string) => page.getByRole('region', { name, exact: true });

async function rows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr: any) => [...tr.querySelectorAll('td')].map((td: any) => td.innerText.replace(/\s+/g, ' ').trim())));
}

async function put(path: string, body: unknown): Promise<void> {
  const res = await h.api.admin('PUT', path, body);
  if (res.status !== 200) throw new Error(`PUT ${path} -> ${res.status} ${JSON.stringify(res.body)}`);
}

beforeAll(async () => {
  await put(`/admin/locations/${loc.east}`, { name: 'Warehouse East', priority: 10, active: true });
  await put(`/admin/locations/${loc.west}`, { name: 'Warehouse West', priority: 20, active: true });
  await put(`/admin/locations/${loc.store}`, { name: 'Store Lyon', priority: 30, active: true });
  for (const sku of [spread, local, thin]) await put(`/admin/inventory/${sku}`, { name: `${sku} item`, priceMinor: 4250, currency: 'USD', onHand: 0, lowStockThreshold: 5 });
  await put(`/admin/inventory/${spread}/locations/${loc.east}`, { onHand: 200 });
  await put(`/admin/inventory/${spread}/locations/${loc.west}`, { onHand: 56 });
  await put(`/admin/inventory/${local}`, { name: `${local} item`, priceMinor: 1250, currency: 'USD', onHand: 40, lowStockThreshold: 5 });
  await put(`/admin/inventory/${thin}/locations/${loc.east}`, { onHand: 300 });
  await put(`/admin/inventory/${thin}/locations/${loc.store}`, { onHand: 3 });
  b = await openBrowser(h.svc.url);
  page = b.page;
  await signIn(page, h.svc.url, 'Sam Stock');
}, 60_000);

afterAll(async () => {
  await b?.close();
});

describe('console: stock by location', () => {
  it('"On hand" on the inventory page sets stock only for a SKU whose stock is at default alone; for any other it links to the SKU\'s page', async () => {
    await page.goto(`${h.svc.url}/console/inventory?sku=${spread}`);
    const card = page.getByRole('region', { name: `${spread} item ${spread}` });
    await card.getByText('256', { exact: true }).first().waitFor(); // on hand (and available)
    expect(await card.getByLabel('On hand').count()).toBe(0);
    await card.getByRole('link', { name: `Set stock on the page of ${spread}` }).click();
    await page.getByRole('heading', { name: `SKU ${spread}` }).waitFor();

    await page.goto(`${h.svc.url}/console/inventory?sku=${local}`);
    await page.getByLabel('On hand').fill('45');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved: ${local} has 45 on hand`).waitFor();
    expect((await h.api.get(`/inventory/${local}`)).body.locations).toEqual([expect.objectContaining({ locationId: 'default', onHand: 45 })]);
  });

  it("on a SKU's page the adjustment's Location starts at its first location by priority that holds stock, and an empty default is left out of its table", async () => {
    for (const width of WIDTHS) {
      await page.setViewportSize(viewport(width));
      await page.goto(`${h.svc.url}/console/inventory/${spread}`);
      const table = region('Stock').getByRole('table');
      await waitFor('the stock table', async () => (await rows(table)).length === 2);
      const cells = await rows(table);
      expect(cells.map((r) => r[0])).toEqual([expect.stringContaining(loc.east), expect.stringContaining(loc.west)]);
      // On a phone too, each location shows its Available.
      expect(await table.getByRole('columnheader', { name: 'Available' }).isVisible()).toBe(true);
      expect(cells[1]).toEqual([expect.stringContaining(loc.west), '56', '0', '0', '56']);
      expect(await page.getByLabel('Location', { exact: true }).inputValue()).toBe(loc.east);
      expect(await pageWidth(page)).toBe(width);
      await shot(page, `sku-locations-${width}`);
      expect(await axe(page)).toEqual([]);
    }
    await page.setViewportSize(viewport(1440));
    await page.getByLabel('Delta').fill('-2');
    await page.getByLabel('Reason', { exact: true }).selectOption('damaged');
    await page.getByRole('button', { name: 'Adjust' }).click();
    await page.getByText(`Adjusted: -2 at ${loc.east}`).waitFor();
    expect((await h.api.get(`/inventory/${spread}`)).body.locations.find((l: any) => l.locationId === loc.east).onHand).toBe(198);
  });

  it('the SKU list has a select "Location" (its figures are then that location\'s) and, with "Low stock", names the locations that are low', async () => {
    await page.goto(`${h.svc.url}/console/inventory`);
    const list = region('Catalogue');
    await list.getByRole('link', { name: spread }).waitFor();
    await list.getByLabel('Location').selectOption(loc.west);
    await page.waitForURL((u) => u.searchParams.get('location') === loc.west);
    await waitFor('the list at the west warehouse', async () => (await rows(list.getByRole('table'))).length === 1);
    expect((await rows(list.getByRole('table')))[0]).toEqual([spread, `${spread} item`, '56', '0', '56', '']);

    await list.getByLabel('Location').selectOption('');
    await list.getByLabel('Low stock').check();
    await waitFor('the low list', async () => (await rows(list.getByRole('table'))).some((r) => r[0] === thin));
    const low = await rows(list.getByRole('table'));
    expect(low.find((r) => r[0] === thin)).toEqual([thin, `${thin} item`, '303', '0', '303', `${loc.store} (3)`]);
    await list.getByLabel('Location').selectOption(loc.store);
    await waitFor('low at the store', async () => {
      const r = await rows(list.getByRole('table'));
      return r.length === 1 && r[0][0] === thin && r[0][2] === '3';
    });
    await shot(page, 'inventory-low-at-1440');
  });
});

describe('console: taking a location offline', () => {
  it('making a location inactive first says what it affects and asks to confirm; nothing changes before', async () => {
    const order = await h.api.order(randomUUID(), { customerId: 'c-collect', items: [{ sku: thin, quantity: 2 }], locationIds: [loc.store] });
    expect(order.status).toBe(201);
    expect((await h.api.admin('POST', '/tcc/inventory/try', { transactionId: randomUUID(), items: [{ sku: thin, quantity: 1 }], locationIds: [loc.store] })).status).toBe(200);
    for (const width of WIDTHS) {
      await page.setViewportSize(viewport(width));
      await page.goto(`${h.svc.url}/console/locations`);
      await page.getByRole('button', { name: `Change ${loc.store}` }).click();
      await page.getByLabel('Active').uncheck();
      await page.getByRole('button', { name: 'Save' }).click();
      const ask = page.getByRole('alertdialog', { name: `Take ${loc.store} offline` });
      await ask.waitFor();
      expect(await text(ask)).toContain('1 holding order and 1 reserved participant branch hold stock there (3 units). 1 SKU has stock there.');
      expect((await h.api.admin('GET', '/admin/locations')).body.data.find((l: any) => l.id === loc.store).active).toBe(true);
      await shot(page, `location-offline-${width}`);
      expect(await axe(page)).toEqual([]);
      if (width === 390) break;
      await ask.getByRole('button', { name: 'No, keep it active' }).click();
      await ask.waitFor({ state: 'detached' });
    }
    await page.getByRole('button', { name: `Yes, take ${loc.store} offline` }).click();
    await page.getByText(`Changed ${loc.store}: Store Lyon, priority 30, inactive.`).waitFor();
    expect((await h.api.admin('GET', '/admin/locations')).body.data.find((l: any) => l.id === loc.store).active).toBe(false);
    await page.setViewportSize(viewport(1440));
  });
});

describe('console: import', () => {
  it('Check shows the failing rows by their line, or the dry run; nothing changes before Import', async () => {
    await page.goto(`${h.svc.url}/console/inventory`);
    await page.getByRole('link', { name: 'Import from a file' }).click();
    await page.getByRole('heading', { name: 'Import stock from a file' }).waitFor();
    const fresh = Array.from({ length: 18 }, (_, i) => `IM${run}-${String(i).padStart(2, '0')}`);
    const csv = (bad: boolean) =>
      [
        'sku,name,priceMinor,currency,locationId,onHand',
        ...fresh.map((sku, i) => `${sku},"Import ${i}",990,USD,${loc.east},${bad && i === 6 ? -5 : 10}`),
        `${spread},,,,${loc.east},210`,
        `${local},,,,default,45`,
      ].join('\n');
    const movementsBefore = (await h.api.admin('GET', `/admin/inventory/${spread}/movements?limit=1000`)).body.data.length;

    await page.getByLabel('File').setInputFiles({ name: 'counts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(true)) });
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByRole('alert').filter({ hasText: 'counts.csv has 1 row that fails. Nothing was imported' }).waitFor();
    const failing = page.getByRole('group', { name: 'Rows that fail' }).getByRole('table');
    expect((await rows(failing))[0]).toEqual(['line 8', 'onHand', expect.stringContaining('onHand must be an integer'), `${fresh[6]},"Import 6",990,USD,${loc.east},-5`]);
    expect(await page.getByRole('button', { name: 'Import' }).count()).toBe(0);
    for (const width of WIDTHS) {
      await page.setViewportSize(viewport(width));
      await shot(page, `import-errors-${width}`);
      expect(await axe(page)).toEqual([]);
      expect(await pageWidth(page)).toBe(width);
    }
    await page.setViewportSize(viewport(1440));

    await page.getByLabel('File').setInputFiles({ name: 'counts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(false)) });
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText('counts.csv is ready to import.').waitFor();
    expect(await text(page.getByRole('status').filter({ hasText: 'ready to import' }))).toContain('It would create 18 SKUs, update 1, and leave 1 unchanged; on hand would change by +192 in all.');
    await shot(page, 'import-checked-1440');
    expect((await h.api.get(`/inventory/${fresh[0]}`)).status).toBe(404); // the check changed nothing
    expect((await h.api.admin('GET', `/admin/inventory/${spread}/movements?limit=1000`)).body.data.length).toBe(movementsBefore);

    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported counts.csv: created 18 SKUs, updated 1, 1 unchanged; on hand changed by +192').waitFor();
    expect((await h.api.get(`/inventory/${fresh[6]}`)).body.locations.find((l: any) => l.locationId === loc.east).onHand).toBe(10);
    expect((await h.api.get(`/inventory/${spread}`)).body.locations.find((l: any) => l.locationId === loc.east).onHand).toBe(210);
  });
});
