import type { Locator, Page } from 'playwright-core';
import { call, makeKey, makeOperator, type MadeOperator } from './support/access.js';
import { openBrowser, shot, text, WIDTHS, viewport, pageWidth, type Browser } from './support/browser.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * The console with CHECKOUT_AUTH=required (API.md, "Checkout routes" and "Identity and access"): the
 * checkout API then needs `checkout`, a scope no operator role holds, so the console reads a SKU
 * through the admin API its session's `inventory:read` covers. A viewer looks a SKU up and opens its
 * page; a stock operator's "On hand" meets a change made meanwhile and reads the SKU again.
 */
const h = useHarness({ CHECKOUT_AUTH: 'required' });

let b: Browser;
let page: Page;
const sku = uniqueSku('GATED');
/** Sorts after `sku` and starts with it: the look-up must still show `sku` itself. */
const longer = `${sku}-XL`;
const ops = {} as Record<'viewer' | 'stock', MadeOperator>;
/** Every path the console's page asked for that is a checkout route, and every answer 403. */
const checkoutCalls: string[] = [];
const refused: string[] = [];

const region = (name: string) => page.getByRole('region', { name, exact: true });
const button = (name: string) => page.getByRole('button', { name, exact: true });

async function rows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr: any) => [...tr.querySelectorAll('td')].map((td: any) => td.innerText.replace(/\s+/g, ' ').trim())));
}

async function signInAs(op: { email: string; password: string }): Promise<void> {
  await b.context.clearCookies(); // whatever an earlier test left signed in
  await page.goto(`${h.svc.url}/console`);
  await page.getByLabel('Email').fill(op.email);
  await page.getByLabel('Password').fill(op.password);
  await button('Sign in').click();
  await button('Sign out').waitFor();
}

async function signOut(): Promise<void> {
  await button('Sign out').click();
  await page.getByLabel('Email').waitFor();
}

beforeAll(async () => {
  expect((await call(h.svc.url, 'PUT', `/admin/inventory/${longer}`, { body: { name: 'Gated mug, large', priceMinor: 1900, currency: 'USD', onHand: 7 } })).status).toBe(200);
  expect((await call(h.svc.url, 'PUT', `/admin/inventory/${sku}`, { body: { name: 'Gated mug', priceMinor: 1250, currency: 'USD', onHand: 40 } })).status).toBe(200);
  // The checkout API is closed to every credential without `checkout`, an operator's session included.
  expect((await call(h.svc.url, 'GET', `/inventory/${sku}`, { bearer: '' })).status).toBe(401);
  expect((await call(h.svc.url, 'GET', `/inventory/${sku}`, { bearer: (await makeKey(h.svc.url, ['inventory:read'])).key })).status).toBe(403);
  ops.viewer = await makeOperator(h.svc.url, 'viewer', 'Vic Viewer');
  ops.stock = await makeOperator(h.svc.url, 'stock', 'Sol Stock');
  b = await openBrowser(h.svc.url);
  page = b.page;
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (/^\/(inventory|orders)(\/|$)/.test(path)) checkoutCalls.push(`${r.method()} ${path}`);
  });
  page.on('response', (r) => {
    if (r.status() === 403) refused.push(`${r.request().method()} ${new URL(r.url()).pathname}`);
  });
}, 60_000);

afterAll(async () => {
  await b?.close();
});

describe('console: CHECKOUT_AUTH=required', () => {
  it('viewer: the SKU look-up and the SKU page show the SKU, read through the admin API; an unknown SKU is not found', async () => {
    await signInAs(ops.viewer);
    await page.goto(`${h.svc.url}/console/inventory`);
    await page.getByLabel('SKU').fill(sku);
    await button('Look up').click();
    const found = region(`Gated mug ${sku}`);
    await found.waitFor();
    expect(await text(found.locator('dl'))).toBe('Price 12.50 USD On hand 40 Reserved 0 Available 40');
    expect(await page.getByLabel('On hand').count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('sku')).toBe(sku);
    for (const width of WIDTHS) {
      await page.setViewportSize(viewport(width));
      expect(await pageWidth(page)).toBe(width);
      await shot(page, `checkout-auth-lookup-${width}`);
    }
    await page.setViewportSize(viewport(1440));

    await page.getByRole('link', { name: `${sku}: locations and movements` }).click();
    await page.getByRole('heading', { name: `SKU ${sku}` }).waitFor();
    expect(await text(region('Stock').locator('dl'))).toBe('Price 12.50 USD On hand 40 Reserved 0 Safety stock 0 Available 40 Low stock at off');
    await waitFor('its stock table', async () => (await rows(region('Stock').getByRole('table'))).length === 1);
    expect(await rows(region('Stock').getByRole('table'))).toEqual([['default', '40', '0', '0', '40']]);
    await waitFor('its movement', async () => (await rows(region('Movements').getByRole('table')))[0]?.[2] === 'set');
    await shot(page, 'checkout-auth-sku-1440');

    // A reload of the page, and a SKU that is only the start of another's.
    await page.reload();
    await waitFor('its stock after a reload', async () => (await rows(region('Stock').getByRole('table'))).length === 1);
    const unknown = sku.slice(0, -1);
    await page.goto(`${h.svc.url}/console/inventory/${unknown}`);
    await page.getByText(`There is no SKU ${unknown}.`).waitFor();
    await page.goto(`${h.svc.url}/console/inventory`);
    await page.getByLabel('SKU').fill(unknown);
    await button('Look up').click();
    await page.getByText(`There is no SKU ${unknown}.`).waitFor();

    expect(checkoutCalls).toEqual([]);
    expect(refused).toEqual([]);
    await signOut();
  });

  it('stock: "On hand" meets a change made meanwhile, reads the SKU again and saves on the second try', async () => {
    await signInAs(ops.stock);
    await page.goto(`${h.svc.url}/console/inventory?sku=${sku}`);
    const found = region(`Gated mug ${sku}`);
    await found.waitFor();
    expect(await page.getByLabel('On hand').inputValue()).toBe('40');

    // Received meanwhile, elsewhere: the figure shown is out of date.
    const received = await call(h.svc.url, 'POST', `/admin/inventory/${sku}/adjustments`, { body: { delta: 5, reason: 'received' } });
    expect(received.status).toBe(201);
    await page.getByLabel('On hand').fill('30');
    await button('Save').click();
    await found.getByText('Not saved: on hand at default changed since it was shown (a sale or another change). The figures are now up to date: check them and save again.').waitFor();
    expect(await text(found.locator('dl'))).toBe('Price 12.50 USD On hand 45 Reserved 0 Available 45');
    expect(await page.getByLabel('On hand').inputValue()).toBe('45');
    await shot(page, 'checkout-auth-stock-changed-1440');

    await page.getByLabel('On hand').fill('30');
    await button('Save').click();
    await page.getByText(`Saved: ${sku} has 30 on hand, 30 available.`).waitFor();
    expect((await call(h.svc.url, 'GET', `/admin/inventory?skuPrefix=${sku}&limit=1`)).body.data[0]).toMatchObject({ sku, onHand: 30 });
    expect((await call(h.svc.url, 'GET', `/admin/inventory/${sku}/movements?limit=1`)).body.data[0]).toMatchObject({ kind: 'set', delta: -15, actor: 'console', operator: 'Sol Stock' });

    // Its page, and an adjustment there.
    await page.goto(`${h.svc.url}/console/inventory/${sku}`);
    await page.getByLabel('Delta').fill('-2');
    await page.getByLabel('Reason').selectOption('damaged');
    await button('Adjust').click();
    await page.getByText('Adjusted: -2 at default (Damaged); on hand there is now 28.').waitFor();

    expect(checkoutCalls).toEqual([]);
    expect(refused).toEqual([]);
    await signOut();
  });

  it("the catalogue's entry for a SKU is the inventory JSON the checkout API answers a checkout key (and lowAt)", async () => {
    const checkout = (await makeKey(h.svc.url, ['checkout'])).key;
    const viaCheckout = (await call(h.svc.url, 'GET', `/inventory/${sku}`, { bearer: checkout })).body;
    const viaAdmin = (await call(h.svc.url, 'GET', `/admin/inventory?skuPrefix=${sku}&limit=1`)).body.data[0];
    expect(viaAdmin).toEqual({ ...viaCheckout, lowAt: [] });
  });
});
