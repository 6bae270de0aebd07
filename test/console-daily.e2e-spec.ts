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
import { startReceiver, type Receiver } from './support/receiver.js';

/**
 * The console's daily operations (API.md, "Operator console", second part) as an operator uses
 * them, in a real Chromium against the built service; everything found by its role and label.
 * CONSOLE_SCREENSHOTS (npm run screenshots) also saves each page at 1440 and 390 px.
 */
// The credential throttle's minute, shortened (CREDENTIAL_THROTTLE_WINDOW_MS): its test waits it out.
const THROTTLE_WINDOW_MS = 5000;
const h = useHarness({
  CONFIRM_RETRY_BASE_MS: '600000', RESERVATION_TTL_MS: '900000', WEBHOOK_MAX_ATTEMPTS: '1', WEBHOOK_RETRY_BASE_MS: '100',
  CREDENTIAL_THROTTLE_WINDOW_MS: String(THROTTLE_WINDOW_MS),
});

const SHOTS = process.env.CONSOLE_SCREENSHOTS;
const OPERATOR = 'Ana Ops';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

let userDir: string;
let context: BrowserContext;
let page: Page;
let receiver: Receiver;
const cspErrors: string[] = [];

const skuA = uniqueSku('MUG'); // 12.50 USD
const skuB = uniqueSku('LAMP'); // 42.50 USD
const skuBulk = uniqueSku('BULK');
const alice: string[] = [];
const many: string[] = [];
const bulk: string[] = [];
let bob: string;
let old: string;
let paid: string; // CONFIRM_SUCCESS through the gateway
let charged: string; // CONFIRM_PENDING, though the gateway did charge it
let pending: string; // CONFIRM_PENDING, nothing charged

async function order(customerId: string, sku: string, quantity = 1): Promise<string> {
  const res = await h.api.order(randomUUID(), { customerId, items: [{ sku, quantity }] });
  if (res.status !== 201) throw new Error(`Try -> ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function events(id: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  return (await h.api.admin('GET', `/admin/orders/${id}/events`)).body.data;
}

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

const orderRows = (): Locator => page.getByRole('table').getByRole('row').filter({ has: page.getByRole('link') });

async function rowIds(): Promise<string[]> {
  return orderRows().getByRole('link').allInnerTexts();
}

function waitForRows(what: string, test: (ids: string[]) => boolean): Promise<string[]> {
  return waitFor(what, async () => {
    const ids = await rowIds();
    return test(ids) ? ids : undefined;
  });
}

const same = (expected: string[]) => (ids: string[]) => ids.length === expected.length && ids.every((id, i) => id === expected[i]);
const details = () => page.getByRole('region', { name: 'Details' });
const text = async (l: Locator) => (await l.innerText()).replace(/\s+/g, ' ');

async function signIn(name?: string): Promise<void> {
  await useAdminToken(page);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  if (name) await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

beforeAll(async () => {
  receiver = await startReceiver();
  expect((await h.api.admin('PUT', '/admin/webhooks/failing', { url: 'http://127.0.0.1:9/hook', events: ['order.reserved'], secret: SECRET })).status).toBe(200);
  expect((await h.api.admin('PUT', '/admin/webhooks/receiving', { url: receiver.url, events: ['order.confirmed'], secret: receiver.secret })).status).toBe(200);
  for (const [sku, price] of [
    [skuA, 1250],
    [skuB, 4250],
    [skuBulk, 100],
  ] as const)
    expect((await h.api.putSku(sku, 500, price)).status).toBe(200);

  old = await order('c-old', skuA);
  // Two hours old, for "Older than (minutes)": only its creation time moves.
  await h.db.query(`UPDATE orders SET created_at = created_at - interval '2 hours' WHERE id = $1`, [old]);
  for (let i = 0; i < 3; i++) alice.push(await order('c-alice', skuA, i + 1));
  bob = await order('c-bob', skuB);
  for (let i = 0; i < 3; i++) bulk.push(await order('c-bulk', skuBulk));
  for (let i = 0; i < 22; i++) many.push(await order('c-many', skuA));
  paid = await order('c-paid', skuB);
  expect((await h.api.post(`/orders/${paid}/confirm`)).status).toBe(200);
  charged = await order('c-charged', skuA);
  await h.sim.script(['charge_then_error']);
  expect((await h.api.post(`/orders/${charged}/confirm`)).status).toBe(202);
  pending = await order('c-pending', skuA, 2);
  await h.sim.script(['error']);
  expect((await h.api.post(`/orders/${pending}/confirm`)).status).toBe(202);

  userDir = mkdtempSync(join(tmpdir(), 'tcc-console-daily-chromium-'));
  context = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1440, height: 900 },
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.svc.url });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    // The console's own pages (the queue dashboard's stylesheet asks for a web font its CSP refuses).
    if (/Content Security Policy/i.test(m.text()) && new URL(page.url()).pathname.startsWith('/console')) cspErrors.push(m.text());
  });
}, 90_000);

afterAll(async () => {
  await context?.close();
  await receiver?.close();
  if (userDir) rmSync(userDir, { recursive: true, force: true });
});

describe('console: daily operations', () => {
  it('signs in with "Your name", which the header shows', async () => {
    await page.goto(`${h.svc.url}/console`);
    await signIn(OPERATOR);
    await page.getByText(`Signed in as ${OPERATOR}`).waitFor();
    expect((await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN, name: 'x'.repeat(101) } })).status).toBe(400);
  });

  it('each figure at a glance is a link to the list filtered by it', async () => {
    const figures = page.getByRole('region', { name: 'Figures at a glance' });
    await figures.getByRole('link', { name: 'CONFIRM_PENDING' }).click();
    await page.waitForURL((u) => u.search === '?status=CONFIRM_PENDING');
    expect((await waitForRows('the pending orders', (ids) => ids.length === 2)).sort()).toEqual([charged, pending].sort());
    await expect(page.getByLabel('Status', { exact: true }).inputValue()).resolves.toBe('CONFIRM_PENDING');
    await figures.getByRole('link', { name: 'CONFIRM_SUCCESS' }).click();
    await page.waitForURL((u) => u.search === '?status=CONFIRM_SUCCESS');
    await waitForRows('the confirmed order', same([paid]));
    await figures.getByRole('link', { name: 'Needing attention' }).click();
    await page.waitForURL((u) => u.search === '?needsAttention=true');
    await page.getByText('No orders match these filters.').waitFor();
  });

  it('filters by Customer, SKU and Older than, sorts, counts ("N orders", per status), and keeps it all in the URL', async () => {
    await page.goto(`${h.svc.url}/console`);
    const all = 1 + alice.length + 1 + bulk.length + many.length + 3;
    await page.getByText(`${all} orders`, { exact: true }).waitFor();
    const options = await page.getByLabel('Status', { exact: true }).locator('option').allInnerTexts();
    expect(options).toEqual([`All statuses (${all})`, `TRY_SUCCESS (${all - 3})`, 'CONFIRM_PENDING (2)', 'CONFIRM_SUCCESS (1)', 'PAY_FAILED (0)', 'CANCELED (0)']);

    expect(await page.getByLabel('Sort', { exact: true }).inputValue()).toBe('newest'); // "Sort" starts at "Newest first"
    await page.getByLabel('Customer', { exact: true }).fill('c-alice');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((u) => u.search === '?customer=c-alice');
    await waitForRows("alice's orders, newest first", same([...alice].reverse()));
    await page.getByText('3 orders', { exact: true }).waitFor();
    await page.getByLabel('Sort', { exact: true }).selectOption('Oldest first');
    await page.waitForURL((u) => u.search === '?customer=c-alice&sort=oldest');
    await waitForRows('oldest first', same(alice));
    await page.getByLabel('Sort', { exact: true }).selectOption('Newest first');
    await page.waitForURL((u) => u.search === '?customer=c-alice');
    await waitForRows('newest first again', same([...alice].reverse()));

    await page.getByLabel('Customer', { exact: true }).fill('');
    await page.getByLabel('SKU', { exact: true }).fill(skuB);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((u) => u.searchParams.get('sku') === skuB && !u.searchParams.has('customer'));
    await waitForRows('orders of the second SKU, newest first', same([paid, bob]));
    await page.getByText('2 orders', { exact: true }).waitFor();
    const skuList = page.url();

    await page.getByLabel('SKU', { exact: true }).fill('');
    await page.getByLabel('Older than (minutes)').fill('60');
    await page.getByRole('button', { name: 'Apply' }).click();
    await waitForRows('the two-hour-old order only', same([old]));
    expect(new URL(page.url()).searchParams.get('olderThan')).toBe('60');

    await page.goBack(); // Back shows the list before, fields and all
    await waitForRows('the SKU list again', same([paid, bob]));
    expect(page.url()).toBe(skuList);
    await expect(page.getByLabel('SKU', { exact: true }).inputValue()).resolves.toBe(skuB);
    await expect(page.getByLabel('Sort', { exact: true }).inputValue()).resolves.toBe('newest');
    await page.reload();
    await waitForRows('the SKU list after a reload', same([paid, bob]));

    // "← Orders" on an order's page returns to the list as it was.
    await page.getByRole('link', { name: bob }).click();
    await page.getByRole('heading', { name: `Order ${bob}` }).waitFor();
    await page.getByRole('link', { name: '← Orders' }).click();
    await waitForRows('the SKU list once more', same([paid, bob]));
    expect(page.url()).toBe(skuList);

    // A shared link shows the same list in another tab.
    const other = await context.newPage();
    await other.goto(skuList);
    await waitFor('the shared list', async () => {
      const ids = await other.getByRole('table').getByRole('row').filter({ has: other.getByRole('link') }).getByRole('link').allInnerTexts();
      return ids.join() === [paid, bob].join();
    });
    await other.close();
  });

  it('the page number lives in the URL: reload and Back keep it', async () => {
    await page.goto(`${h.svc.url}/console?customer=c-many&sort=oldest`);
    await waitForRows('page 1', same(many.slice(0, 20)));
    await page.getByRole('button', { name: 'Next page' }).click();
    await waitForRows('page 2', same(many.slice(20)));
    const url = new URL(page.url());
    expect(url.searchParams.get('page')).toBe('2');
    expect(url.searchParams.get('cursor')).toBeTruthy();
    await page.getByText('Page 2').waitFor();
    await page.reload();
    await waitForRows('page 2 after a reload', same(many.slice(20)));
    await page.getByRole('button', { name: 'Previous page' }).click();
    await waitForRows('page 1 again', same(many.slice(0, 20)));
    await page.goBack();
    await waitForRows('Back to page 2', same(many.slice(20)));
  });

  it('Search opens the order whose id or transaction id it is, else filters by customer', async () => {
    await page.goto(`${h.svc.url}/console`);
    await page.getByLabel('Search', { exact: true }).fill(bob);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: `Order ${bob}` }).waitFor();

    await page.goto(`${h.svc.url}/console`);
    await page.getByLabel('Search', { exact: true }).fill(`tcc-${paid}`);
    await page.getByLabel('Search', { exact: true }).press('Enter');
    await page.getByRole('heading', { name: `Order ${paid}` }).waitFor();
    expect((await h.api.admin('GET', `/admin/orders/${paid}`)).body.transactionId).toBe(`tcc-${paid}`);

    await page.goto(`${h.svc.url}/console`);
    await page.getByLabel('Search', { exact: true }).fill('c-bob');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL((u) => u.search === '?customer=c-bob');
    await waitForRows("bob's order", same([bob]));
  });

  it('Cancel matching: the dry run counts, a Reason is asked, "Cancel N orders" cancels and says how many', async () => {
    await page.goto(`${h.svc.url}/console`);
    await page.getByRole('button', { name: 'Cancel matching' }).click();
    const panel = page.getByRole('region', { name: 'Cancel matching orders' });
    await panel.getByText('Filter the list first').waitFor(); // never every holding order at once
    await page.goto(`${h.svc.url}/console?sku=${skuBulk}`);
    await waitForRows('the bulk orders', same([...bulk].reverse()));
    await page.getByRole('button', { name: 'Cancel matching' }).click();
    await panel.getByText('3 holding orders match these filters.').waitFor();
    for (const id of bulk) expect((await h.api.admin('GET', `/admin/orders/${id}`)).body.status).toBe('TRY_SUCCESS'); // the dry run changed nothing
    await panel.getByRole('button', { name: 'Cancel 3 orders' }).click();
    await panel.getByText('Write the reason').waitFor();
    await panel.getByLabel('Reason').fill('supplier recall R-12');
    await panel.getByRole('button', { name: 'Cancel 3 orders' }).click();
    await panel.getByText('Canceled 3 orders.').waitFor();
    await waitFor('the list to show them canceled', async () => (await page.locator('tbody').innerText()).split('CANCELED').length - 1 === 3);
    for (const id of bulk) {
      expect((await h.api.admin('GET', `/admin/orders/${id}`)).body.status).toBe('CANCELED');
      const note = (await events(id)).find((e) => e.type === 'operator.force_cancel');
      expect(note?.data).toEqual({ reason: 'supplier recall R-12', bulk: true, operator: OPERATOR });
    }
  });

  it("an order's page: only what its state allows; a force action asks first, naming the order and its amount; the operator is recorded", async () => {
    const id = alice[1]; // 2 × 12.50 USD
    await page.goto(`${h.svc.url}/console/orders/${id}`);
    await details().getByText('TRY_SUCCESS', { exact: true }).waitFor();
    expect(await page.title()).toContain(id);
    const actions = page.getByRole('region', { name: 'Actions' });
    expect(await actions.getByRole('button').allInnerTexts()).toEqual(['Force confirm', 'Force cancel']);
    expect(await page.getByRole('link', { name: skuA }).getAttribute('href')).toBe(`/console/inventory/${skuA}`);
    expect(await text(details())).toContain('Amount 25.00 USD');
    expect(await text(page.getByRole('region', { name: 'Payment' }))).toContain('has not reached the payment gateway');

    await page.getByRole('button', { name: 'Copy order id' }).click();
    await waitFor('the id on the clipboard', async () => (await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())) === id);

    await page.getByLabel('Reason').fill('duplicate order, ticket OPS-9');
    await page.getByRole('button', { name: 'Force cancel' }).click();
    const ask = page.getByRole('alertdialog', { name: 'Confirm force cancel' });
    expect(await text(ask)).toContain(`Force-cancel order ${id} for 25.00 USD?`);
    await ask.getByRole('button', { name: 'No, keep it' }).click();
    await ask.waitFor({ state: 'detached' });
    expect((await h.api.admin('GET', `/admin/orders/${id}`)).body.status).toBe('TRY_SUCCESS');
    await page.getByRole('button', { name: 'Force cancel' }).click();
    await ask.getByRole('button', { name: 'Yes, force cancel' }).click();
    await details().getByText('CANCELED', { exact: true }).waitFor();
    await actions.getByText('None: the order is CANCELED').waitFor();
    expect(await actions.getByRole('button').count()).toBe(0);
    expect((await events(id)).find((e) => e.type === 'operator.force_cancel')?.data).toEqual({ reason: 'duplicate order, ticket OPS-9', operator: OPERATOR });

    // Confirmed through the gateway: no actions, and the payment as the gateway holds it.
    await page.goto(`${h.svc.url}/console/orders/${paid}`);
    await details().getByText('CONFIRM_SUCCESS', { exact: true }).waitFor();
    expect(await actions.getByRole('button').count()).toBe(0);
    const payment = page.getByRole('region', { name: 'Payment' });
    await payment.getByRole('table').waitFor();
    const gateway = (await h.sim.ledger()).payments.find((p) => p.reference === paid)!;
    expect(await text(payment.getByRole('row').nth(1))).toBe(`${gateway.id} Copy succeeded 42.50 USD 0.00 USD`);
    await shot('order-confirmed-1440');
  });

  it('a CONFIRM_PENDING order shows when its next retry runs; Retry now records the operator; relative times on the timeline', async () => {
    await page.goto(`${h.svc.url}/console/orders/${pending}`);
    await details().getByText('CONFIRM_PENDING', { exact: true }).waitFor();
    const shown = /Next step next retry in (\d+) min/.exec(await text(details()));
    const due = (await h.api.admin('GET', `/admin/orders/${pending}`)).body.nextActionAt;
    expect(Math.abs(Number(shown?.[1]) - (Date.parse(due) - Date.now()) / 60_000)).toBeLessThan(1.1); // "in N min", N whole minutes
    expect(await page.getByRole('region', { name: 'Actions' }).getByRole('button').allInnerTexts()).toEqual(['Force confirm', 'Force cancel', 'Retry now']);
    const timeline = page.getByRole('region', { name: 'Timeline' });
    expect(await text(timeline)).toMatch(/UTC · (just now|\d+ s ago|\d+ min ago)/);
    // Events in words beside their names, the retry's delay as a duration rather than milliseconds.
    expect(await text(timeline)).toMatch(/Confirm retry scheduled confirm\.retry_scheduled runs after: \d+ min/);
    expect(await text(timeline)).not.toMatch(/inMs/);
    await shot('order-pending-1440');
    await page.getByRole('button', { name: 'Retry now' }).click();
    await details().getByText('CONFIRM_SUCCESS', { exact: true }).waitFor();
    expect((await events(pending)).find((e) => e.type === 'operator.retry_now')?.data).toEqual({ operator: OPERATOR });
  });

  it('Payment shows the charge on a canceled order that still needs its refund', async () => {
    await page.goto(`${h.svc.url}/console/orders/${charged}`);
    await details().getByText('CONFIRM_PENDING', { exact: true }).waitFor();
    const payment = page.getByRole('region', { name: 'Payment' });
    await payment.getByText('12.50 USD').first().waitFor(); // charged, though the gateway answered an error
    await page.getByLabel('Reason').fill('customer gave up');
    await page.getByRole('button', { name: 'Force cancel' }).click();
    await page.getByRole('button', { name: 'Yes, force cancel' }).click();
    await details().getByText('CANCELED', { exact: true }).waitFor();
    expect(await text(details())).toMatch(/Refund status (PENDING|DONE)/);
    const row = payment.getByRole('row').nth(1);
    expect(await text(row)).toMatch(/succeeded 12\.50 USD (0\.00|12\.50) USD$/);
    await waitFor('the refund to land and show', async () => {
      await page.reload();
      await payment.getByRole('table').waitFor();
      return (await text(payment.getByRole('row').nth(1))).endsWith('succeeded 12.50 USD 12.50 USD');
    }, 20_000, 1000);
  });

  it('an order that needs attention says why, in words; Acknowledge records the operator; when it comes back the page says so', async () => {
    const flag = (detail: string) =>
      h.db.query(`SELECT tcc_flag_attention($1::uuid, 'reconciliation_mismatch', $2::jsonb)`, [paid, JSON.stringify({ kind: 'multiple_captures', detail })]);
    await flag('confirmed, but the gateway has 2 captures');
    await page.goto(`${h.svc.url}/console/orders/${paid}`);
    const notice = page.getByRole('alert').filter({ has: page.getByRole('heading', { name: 'Needs attention' }) });
    await notice.waitFor();
    expect(await text(notice)).toContain('The gateway captured this order more than once (confirmed, but the gateway has 2 captures).');
    await shot('order-attention-1440');
    await page.getByLabel('Reason').fill('second capture refunded by hand');
    await page.getByRole('button', { name: 'Acknowledge' }).click();
    await waitFor('the flag to drop', async () => (await text(details())).includes('Needs attention No'));
    await notice.waitFor({ state: 'detached' });
    expect((await events(paid)).find((e) => e.type === 'operator.acknowledge')?.data).toEqual({ reason: 'second capture refunded by hand', operator: OPERATOR });

    await flag('confirmed, but the gateway has 3 captures');
    await page.reload();
    const again = page.getByRole('alert').filter({ has: page.getByRole('heading', { name: 'Needs attention again' }) });
    await again.waitFor();
    const said = await text(again);
    expect(said).toContain('(confirmed, but the gateway has 3 captures)');
    expect(said).toMatch(new RegExp(`It was acknowledged (just now|\\d+ s ago) by ${OPERATOR} \\(“second capture refunded by hand”\\), and came back`));
  });

  it('Auto-refresh (on by default) keeps the list and the order page current every 10 s', async () => {
    const id = alice[2];
    await page.goto(`${h.svc.url}/console/orders/${id}`);
    await details().getByText('TRY_SUCCESS', { exact: true }).waitFor();
    expect(await page.getByLabel('Auto-refresh').isChecked()).toBe(true);
    expect((await h.api.admin('POST', `/admin/orders/${id}/force-cancel`, { reason: 'elsewhere' })).status).toBe(200);
    await details().getByText('CANCELED', { exact: true }).waitFor({ timeout: 15_000 });

    await page.goto(`${h.svc.url}/console?customer=c-alice`);
    await waitForRows("alice's orders", same([...alice].reverse()));
    expect(await page.getByLabel('Auto-refresh').isChecked()).toBe(true);
    expect((await h.api.admin('POST', `/admin/orders/${alice[0]}/force-cancel`, { reason: 'elsewhere' })).status).toBe(200);
    await waitFor('the list to refresh itself', async () => (await text(orderRows().last())).includes('CANCELED'), 15_000, 250);
  });

  it('/console/webhooks: endpoints with their deliveries by "Delivery status"; Resend sends a failed one again', async () => {
    await waitFor('the failed deliveries', async () => {
      const r = await h.api.admin('GET', '/admin/webhooks/failing/deliveries?status=failed&limit=1000');
      return r.body.data.length >= 30;
    }, 30_000, 250);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    expect(await page.getByLabel('Delivery status').inputValue()).toBe('failed');
    const failing = page.getByRole('region', { name: 'failing' });
    expect(await text(failing)).toContain('URL http://127.0.0.1:9/hook Events order.reserved');
    const first = failing.getByRole('row').nth(1);
    await first.getByRole('button', { name: 'Resend' }).waitFor();
    expect(await text(first)).toMatch(new RegExp(`^order\\.reserved ${old} failed 1 \\S`));
    await shot('webhooks-1440');
    // The endpoint is fixed (now the receiver): Resend sends the failed delivery again, same webhook-id.
    const failed = (await h.api.admin('GET', '/admin/webhooks/failing/deliveries?status=failed&limit=1000')).body.data.find((d: any) => d.orderId === old);
    expect((await h.api.admin('PUT', '/admin/webhooks/failing', { url: receiver.url, events: ['order.reserved'], secret: receiver.secret })).status).toBe(200);
    await first.getByRole('button', { name: 'Resend' }).click();
    await failing.getByText(`Resent order.reserved (${failed.id}): it is pending, due now.`).waitFor();
    await waitFor('the resent delivery to arrive', async () => receiver.received.some((r) => r.id === failed.id && r.event.data.order.id === old));
    await waitFor('it to show as delivered', async () => {
      const d = (await h.api.admin('GET', '/admin/webhooks/failing/deliveries?limit=1000')).body.data.find((x: any) => x.id === failed.id);
      return d.status === 'delivered';
    });

    await page.getByLabel('Delivery status').selectOption('delivered');
    await page.waitForURL((u) => u.search === '?status=delivered');
    const receiving = page.getByRole('region', { name: 'receiving' });
    await receiving.getByRole('link', { name: paid }).waitFor();
    expect(await text(receiving.getByRole('row').filter({ hasText: paid }))).toMatch(/^order\.confirmed \S+ delivered 1 —/);
    expect(await receiving.getByRole('button', { name: 'Resend' }).count()).toBe(0);
  });

  it('a stock change made in the console names its operator in the ledger', async () => {
    const before = (await h.api.get(`/inventory/${skuB}`)).body.onHand;
    await page.goto(`${h.svc.url}/console/inventory?sku=${skuB}`);
    await page.getByLabel('On hand').fill('480');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved: ${skuB} has 480 on hand`).waitFor();
    const movements = (await h.api.admin('GET', `/admin/inventory/${skuB}/movements?limit=1`)).body.data;
    expect(movements[0]).toMatchObject({ kind: 'set', delta: 480 - before, onHandAfter: 480, actor: 'console', operator: OPERATOR });
  });

  it('an unknown page, order or SKU shows a console page saying so, with the navigation, never JSON', async () => {
    for (const [path, heading, says] of [
      ['/console/no-such-page', 'Page not found', 'There is no such page in the console.'],
      ['/console/orders/not-an-order', 'Order not found', 'There is no order not-an-order.'],
      [`/console/orders/${randomUUID()}`, 'Order not found', 'There is no order'],
    ]) {
      const res = await page.goto(`${h.svc.url}${path}`);
      expect(res?.status()).toBe(path.includes('orders/') && !path.includes('not-an') ? 200 : 404);
      expect(res?.headers()['content-type']).toMatch(/text\/html/);
      await page.getByRole('heading', { name: heading }).waitFor();
      await page.getByRole('alert').filter({ hasText: says }).waitFor();
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Orders' }).waitFor();
    }
    for (const path of ['/console/inventory/bad%20sku', '/console/orders/1234', '/console/orders/%ff', '/console/%00%ff', '/console/no/such/page']) {
      // A browser asks for HTML and gets the console's page; anything else gets the contract's problem+json.
      const res = await fetch(`${h.svc.url}${path}`, { headers: { accept: 'text/html,*/*;q=0.8' } });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
      expect(await res.text()).toMatch(/^<!doctype html>/);
      const api = await fetch(`${h.svc.url}${path}`);
      expect(api.status).toBe(404);
      expect(api.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(((await api.json()) as { code: string }).code).toBe('NOT_FOUND');
    }
    const broken = await page.goto(`${h.svc.url}/console/orders/%ff`);
    expect(broken?.status()).toBe(404);
    await page.getByRole('heading', { name: 'Order not found' }).waitFor();
  });

  it('the queue dashboard is read-only: it offers no action, and its API refuses one', async () => {
    const queues = (await h.api.admin('GET', '/admin/queues/api/queues')).body.queues as { name: string; isPaused: boolean; readOnlyMode: boolean }[];
    expect(queues.length).toBeGreaterThan(0);
    const res = await h.api.send('PUT', `/admin/queues/api/queues/${encodeURIComponent(queues[0].name)}/pause`, { admin: true });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    for (const q of (await h.api.admin('GET', '/admin/queues/api/queues')).body.queues) expect(q).toMatchObject({ isPaused: false, readOnlyMode: true });

    // A CONFIRM_PENDING order's retry waits as a delayed job: something an action could be offered on.
    const waiting = await order('c-queue', skuA);
    await h.sim.script(['error']);
    expect((await h.api.post(`/orders/${waiting}/confirm`)).status).toBe(202);
    await page.goto(`${h.svc.url}/admin/queues`);
    await page.getByText('confirm-retry').first().waitFor();
    await shot('queue-dashboard-1440');
    await page.getByText('confirm-retry').first().click();
    await page.waitForURL(/\/admin\/queues\/queue\//);
    // Its delayed jobs (each confirm-retry bucket) would offer Promote, Duplicate, Remove were it writable.
    await page.getByText(/^Delayed/i).first().click();
    await page.getByText(/^step-\d+$/).first().waitFor();
    const actions = /^(promote|retry|retry all|clean|clean all|pause|resume|empty|obliterate|add job|duplicate|remove|delete|update data)$/i;
    const offered = (await page.getByRole('button').count()) && (await page.getByRole('button', { name: actions }).count()) + (await page.getByRole('menuitem', { name: actions }).count()) + (await page.getByText(actions).count());
    expect(offered).toBe(0);
  });

  it('/admin/queues opened by a browser without a session goes to the sign-in, which returns there', async () => {
    const api = await fetch(`${h.svc.url}/admin/queues`, { redirect: 'manual', headers: { accept: 'application/json' } });
    expect(api.status).toBe(401);
    const browser = await fetch(`${h.svc.url}/admin/queues`, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/console?next=%2Fadmin%2Fqueues');
    const apiCall = await fetch(`${h.svc.url}/admin/queues/api/queues`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(apiCall.status).toBe(401);

    await context.clearCookies();
    await page.goto(`${h.svc.url}/admin/queues`);
    await page.getByLabel('Admin token').waitFor();
    expect(new URL(page.url()).pathname).toBe('/console');
    await signIn(OPERATOR);
    await page.waitForURL(`${h.svc.url}/admin/queues`);
    await page.getByText('confirm-retry').first().waitFor();
  });

  it('at 390 px every page fits without sideways scrolling: the navigation wraps, wide tables scroll in their own box', async () => {
    const pages: [string, string, () => Promise<unknown>][] = [
      ['orders', '/console', () => waitForRows('rows', (ids) => ids.length > 0)],
      ['order', `/console/orders/${paid}`, () => page.getByRole('region', { name: 'Payment' }).getByRole('table').waitFor()],
      ['order-refunded', `/console/orders/${charged}`, () => page.getByRole('region', { name: 'Timeline' }).getByRole('listitem').first().waitFor()],
      ['webhooks', '/console/webhooks', () => page.getByRole('region', { name: 'failing' }).getByRole('row').nth(1).waitFor()],
      ['inventory', `/console/inventory?sku=${skuA}`, () => page.getByLabel('On hand').waitFor()],
      ['not-found', '/console/no-such-page', () => page.getByRole('heading', { name: 'Page not found' }).waitFor()],
    ];
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const [name, path, ready] of pages) {
        await page.goto(`${h.svc.url}${path}`);
        await ready();
        if (name === 'orders') await page.getByText(/^\d+ orders$/).waitFor();
        await shot(`${name}-${width}`);
        const fit = await page.evaluate(() => {
          const doc = (globalThis as any).document;
          const links = [...doc.querySelectorAll('header nav a')].map((a: any) => a.getBoundingClientRect());
          const wraps = [...doc.querySelectorAll('.table-wrap')].map((w: any) => ({ right: w.getBoundingClientRect().right, overflow: (globalThis as any).getComputedStyle(w).overflowX }));
          return { scroll: doc.documentElement.scrollWidth, linkRights: links.map((r: any) => r.right), linkTops: links.map((r: any) => r.top), wraps };
        });
        expect({ name, width, scroll: fit.scroll }).toEqual({ name, width, scroll: width });
        for (const right of fit.linkRights) expect(right).toBeLessThanOrEqual(width);
        for (const w of fit.wraps) {
          expect(w.right).toBeLessThanOrEqual(width);
          expect(w.overflow).toBe('auto');
        }
        // On a phone the navigation's links wrap onto more than one line (and every one is on the screen).
        if (width === 390) {
          expect(fit.linkRights.length).toBeGreaterThan(1);
          expect(new Set(fit.linkTops).size).toBeGreaterThan(1);
        }
      }
    }
    // The SKU's movements are wider than a phone at 1440's layout: on a phone each row is a card,
    // and the order list shows each order's status, customer and amount beside its id.
    await page.goto(`${h.svc.url}/console`);
    await waitForRows('rows', (ids) => ids.length > 0);
    const card = orderRows().first();
    for (const label of ['Status', 'Customer', 'Amount']) {
      const box = await card.locator(`td[data-label="${label}"]`).boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 60_000);

  it('the console broke no CSP rule', () => {
    expect(cspErrors).toEqual([]);
  });

  it('sign-in: after 5 wrong tokens from one address within the window it answers 429 with Retry-After until the window is over, and the page says so', async () => {
    await page.goto(`${h.svc.url}/console`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    await shot('sign-in-1440');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('sign-in-390');
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBe(390);
    await page.setViewportSize({ width: 1440, height: 900 });

    const wrong = { token: 'not-the-admin-token-0000' };
    for (let i = 0; i < 4; i++) expect((await h.api.send('POST', '/console/session', { body: wrong })).status).toBe(401);
    await page.getByLabel('Admin token').fill(wrong.token);
    await page.getByRole('button', { name: 'Sign in' }).click(); // the fifth
    await page.getByRole('alert').filter({ hasText: 'not the admin token' }).waitFor();
    await signIn(); // the right token, refused for now
    await page.getByRole('alert').filter({ hasText: /Too many wrong tokens from this address: sign-in is refused for now\. Try again in \d+ s\./ }).waitFor();
    expect((await context.cookies(h.svc.url)).find((c) => c.name === 'tcc_console')).toBeUndefined();

    const refused = await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(refused.headers.get('set-cookie')).toBeNull();
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(THROTTLE_WINDOW_MS / 1000);
    // Every credential from this address waits too (the bearer token); a request without one does not.
    expect((await h.api.admin('GET', '/admin/stats')).status).toBe(429);
    expect((await h.api.get(`/inventory/${skuA}`)).status).toBe(200);

    // Refused until the window ends, within the Retry-After it gave (polled with the bearer token,
    // which a throttled address presents without counting as wrong).
    await waitFor('the throttle window to end', async () => (await h.api.admin('GET', '/admin/stats')).status === 200, (wait + 2) * 1000, 100);
    expect((await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } })).status).toBe(200);

    // A burst of guesses sent at once: only five are answered 401, however they interleave; the
    // right token above counted for nothing.
    const burst = await Promise.all(Array.from({ length: 12 }, () => h.api.send('POST', '/console/session', { body: wrong })));
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expect((await h.api.send('POST', '/console/session', { body: { token: ADMIN_TOKEN } })).status).toBe(429);
    // The window ends for the tests after this one.
    await waitFor('the throttle window to end', async () => (await h.api.admin('GET', '/admin/stats')).status === 200, THROTTLE_WINDOW_MS + 3000, 250);
  }, 60_000);
});

describe('admin API: what the console reads', () => {
  it('GET /admin/orders/counts: orders the filters match, in all and per status under the other filters', async () => {
    const all = await h.api.admin('GET', `/admin/orders/counts?sku=${skuA}`);
    expect(all.status).toBe(200);
    const byStatus = all.body.byStatus;
    expect(Object.keys(byStatus)).toEqual(['TRY_SUCCESS', 'CONFIRM_PENDING', 'CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED']);
    const listed = (await h.api.admin('GET', `/admin/orders?sku=${skuA}&limit=1000`)).body.data as { status: string }[];
    expect(all.body.total).toBe(listed.length);
    for (const [s, n] of Object.entries(byStatus)) expect(n).toBe(listed.filter((o) => o.status === s).length);
    const canceled = await h.api.admin('GET', `/admin/orders/counts?sku=${skuA}&status=CANCELED`);
    expect(canceled.body).toEqual({ total: byStatus.CANCELED, byStatus });
    for (const bad of ['status=NOPE', 'olderThanMinutes=-1', 'limit=5', 'sku=bad%20sku']) {
      const res = await h.api.admin('GET', `/admin/orders/counts?${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    }
  });

  it('GET /admin/orders?sort=newest pages newest first; a cursor of one order is refused by the other', async () => {
    const oldest = (await h.api.admin('GET', '/admin/orders?customerId=c-many&limit=1000')).body.data.map((o: any) => o.id);
    expect(oldest).toEqual(many);
    const first = await h.api.admin('GET', '/admin/orders?customerId=c-many&sort=newest&limit=15');
    const second = await h.api.admin('GET', `/admin/orders?customerId=c-many&sort=newest&limit=15&cursor=${first.body.nextCursor}`);
    expect([...first.body.data, ...second.body.data].map((o: any) => o.id)).toEqual([...many].reverse());
    expect(second.body.nextCursor).toBeNull();
    const mixed = await h.api.admin('GET', `/admin/orders?customerId=c-many&sort=oldest&cursor=${first.body.nextCursor}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.code).toBe('VALIDATION_FAILED');
    expect((await h.api.admin('GET', '/admin/orders?sort=sideways')).status).toBe(400);
  });

  it('GET /admin/orders/{id}/payment: what the gateway holds; 404 for an unknown or malformed id; 503 when the gateway does not answer', async () => {
    const res = await h.api.admin('GET', `/admin/orders/${paid}/payment`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([expect.objectContaining({ status: 'succeeded', amountMinor: 4250, currency: 'USD', reference: paid, refundedMinor: 0 })]);
    expect((await h.api.admin('GET', `/admin/orders/${alice[0]}/payment`)).body).toEqual({ data: [] });
    for (const id of [randomUUID(), 'not-an-id']) {
      const missing = await h.api.admin('GET', `/admin/orders/${id}/payment`);
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('NOT_FOUND');
    }
    await h.sim.setFaults({ down: true });
    try {
      const down = await h.api.admin('GET', `/admin/orders/${paid}/payment`);
      expect(down.status).toBe(503);
      expect(down.body.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await h.sim.setFaults({ down: false });
    }
  });

  it('an action made with the bearer token records no operator', async () => {
    const id = await order('c-bearer', skuA);
    expect((await h.api.admin('POST', `/admin/orders/${id}/force-cancel`, { reason: 'by script' })).status).toBe(200);
    expect((await events(id)).find((e) => e.type === 'operator.force_cancel')?.data).toEqual({ reason: 'by script' });
  });
});
