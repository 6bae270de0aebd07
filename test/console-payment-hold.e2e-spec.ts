import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { useAdminToken } from './support/browser.js';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { reserveHeld } from './support/holds.js';
import { uniqueSku } from './support/orders.js';

/**
 * The console's order page for an order whose payment was held at Try (API.md "Payment held at
 * Try"): "Payment" shows the authorization, its expiry and what was captured, and the timeline
 * names the gateway's calls — in a real Chromium against the built service.
 */
const h = useHarness({ CONFIRM_RETRY_BASE_MS: '600000' });

let userDir: string;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  userDir = mkdtempSync(join(tmpdir(), 'tcc-console-hold-chromium-'));
  context = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1440, height: 900 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${h.svc.url}/console`);
  await useAdminToken(page);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}, 90_000);

afterAll(async () => {
  await context?.close();
  if (userDir) rmSync(userDir, { recursive: true, force: true });
});

const paymentText = async () => (await page.getByRole('region', { name: 'Payment' }).innerText()).replace(/\s+/g, ' ');

it('"Payment" shows the authorization, its expiry, then what was captured; the timeline names each call', async () => {
  const order = await reserveHeld(h.api, uniqueSku('CONHOLD'), 2, 10, 1250);
  await page.goto(`${h.svc.url}/console/orders/${order.id}`);
  // The order's own record first, then the gateway's (asked by the page) below it.
  await waitFor('the held payment', async () => {
    const t = await paymentText();
    return t.includes('Authorized: the amount is held') && t.includes(order.paymentId);
  });
  const held = await paymentText();
  expect(held).toContain('Authorized 25.00 USD');
  expect(held).toContain('Authorization expires');
  expect(held).toMatch(/Captured 0\.00 USD/);

  expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(200);
  await page.reload();
  await waitFor('the capture', async () => (await paymentText()).includes('Captured 25.00 USD'));
  expect(await paymentText()).toContain('Authorization Captured');
  const timelineText = async () => (await page.getByRole('region', { name: 'Timeline' }).innerText()).replace(/\s+/g, ' ');
  const timeline = await waitFor('the timeline', async () => {
    const t = await timelineText();
    return t.includes('Capture sent') && t;
  });
  expect(timeline).toContain('Authorization sent');
  expect(timeline).toContain('Capture sent');
  expect(timeline).toContain('Payment changed');
});

it('a canceled order shows its hold voided', async () => {
  const order = await reserveHeld(h.api, uniqueSku('CONVOID'), 1);
  await h.api.post(`/orders/${order.id}/cancel`);
  await waitFor('the void', async () => (await h.api.get(`/orders/${order.id}`)).body.payment.status === 'voided');
  await page.goto(`${h.svc.url}/console/orders/${order.id}`);
  await waitFor('the voided hold', async () => (await paymentText()).includes('Voided: nothing is held'));
  await waitFor('the timeline', async () => (await page.getByRole('region', { name: 'Timeline' }).innerText()).includes('Void sent'));
});
