import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { useAdminToken } from './support/browser.js';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { fetchFromAddress, waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * The operator console as an operator uses it: a real Chromium (Debian's /usr/bin/chromium or
 * CHROMIUM_PATH, never a downloaded one) against the built service, everything found by its role
 * and label. The screenshots of docs/screenshots come from console-daily and console-inventory.
 */
// A CONFIRM_PENDING order waits for "Retry now"; no order of the file expires while it runs (the
// stats are asserted exactly, and a loaded run takes longer than the suite's 60 s TTL).
const h = useHarness({ CONFIRM_RETRY_BASE_MS: '600000', RESERVATION_TTL_MS: '900000' });

const CUSTOMERS = ['c-alice', 'c-bob', 'c-carol', 'c-dave', 'c-erin'];
const PAGE_SIZE = 20; // src/console/web/views/orders.ts

let userDir: string;
let context: BrowserContext;
let page: Page;
const external: string[] = [];
const cspErrors: string[] = [];

const sku = uniqueSku('MUG');
const holding: string[] = []; // TRY_SUCCESS orders, oldest first
let pending: string; // CONFIRM_PENDING
let flagged: string; // needs attention

async function order(customerId: string, quantity: number): Promise<string> {
  const res = await h.api.order(randomUUID(), { customerId, items: [{ sku, quantity }] });
  if (res.status !== 201) throw new Error(`Try -> ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** The list's order rows (the header row has no link). */
const orderRows = (): Locator => page.getByRole('table').getByRole('row').filter({ has: page.getByRole('link') });

async function rowIds(): Promise<string[]> {
  return orderRows().getByRole('link').allInnerTexts();
}

async function waitForRows(what: string, test: (ids: string[]) => boolean): Promise<string[]> {
  return waitFor(what, async () => {
    const ids = await rowIds();
    return test(ids) ? ids : undefined;
  });
}

/** The session cookie as the browser holds it. */
async function sessionCookie(): Promise<string | undefined> {
  return (await context.cookies(h.svc.url)).find((c) => c.name === 'tcc_console')?.value;
}

function json(res: Response): Promise<any> {
  return res.json();
}

/** `elsewhere`: from an address of its own, for a credential that is wrong on purpose (it counts towards the address's throttle). */
function send(method: string, path: string, headers: Record<string, string>, body?: unknown, elsewhere = false): Promise<Response> {
  const init = {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
  return elsewhere ? fetchFromAddress(`${h.svc.url}${path}`, init) : fetch(`${h.svc.url}${path}`, init);
}

beforeAll(async () => {
  expect((await h.api.putSku(sku, 500, 1250)).status).toBe(200);
  for (let i = 0; i < PAGE_SIZE + 5; i++) holding.push(await order(CUSTOMERS[i % CUSTOMERS.length], 1 + (i % 3)));
  pending = await order('c-frank', 2);
  await h.sim.script(['error']);
  expect((await h.api.post(`/orders/${pending}/confirm`)).status).toBe(202);
  flagged = await order('c-grace', 1);
  // No API raises the flag by hand; what raises it (a refund failing for REFUND_ALERT_AFTER_MS,
  // a reconciliation mismatch) is covered in operations.e2e-spec.ts. Here only the filter matters.
  await h.db.query('UPDATE orders SET needs_attention = true WHERE id = $1', [flagged]);

  userDir = mkdtempSync(join(tmpdir(), 'tcc-console-chromium-'));
  context = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('request', (r) => {
    if (!r.url().startsWith(h.svc.url) && !r.url().startsWith('data:') && new URL(page.url() || 'about:blank').pathname.startsWith('/console')) external.push(r.url());
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
}, 60_000);

afterAll(async () => {
  await context?.close();
  if (userDir) rmSync(userDir, { recursive: true, force: true });
});

describe('operator console', () => {
  it('serves the page with a CSP that allows no inline script or style', async () => {
    const res = await send('GET', '/console', {});
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https:/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<style>|\son[a-z]+=|style=/i); // no inline code, no inline handlers
    for (const path of [`/console/orders/${holding[0]}`, '/console/inventory']) expect((await send('GET', path, {})).status).toBe(200);
  });

  it('a wrong token shows an error and sets no cookie', async () => {
    await page.goto(`${h.svc.url}/console`);
    await useAdminToken(page);
    await page.getByLabel('Admin token').fill('not-the-admin-token-0000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not the admin token' }).waitFor();
    expect(await sessionCookie()).toBeUndefined();
    const res = await send('POST', '/console/session', {}, { token: 'not-the-admin-token-0000' });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await json(res)).code).toBe('UNAUTHORIZED');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('signs in: an HttpOnly, SameSite=Strict session cookie, and the figures at a glance', async () => {
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Orders' }).waitFor();
    const cookie = (await context.cookies(h.svc.url)).find((c) => c.name === 'tcc_console');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(cookie!.expires * 1000 - Date.now()).toBeGreaterThan(28_800_000 - 60_000); // CONSOLE_SESSION_TTL_MS default
    expect(await page.evaluate(() => (globalThis as any).document.cookie)).toBe(''); // the page's scripts never see it

    const figures = page.getByRole('region', { name: 'Figures at a glance' });
    await figures.getByText('Payment breaker').waitFor();
    const text = (await figures.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain(`TRY_SUCCESS ${holding.length + 1}`);
    expect(text).toContain('CONFIRM_PENDING 1');
    expect(text).toContain('Needing attention 1');
    expect(text).toContain('Payment breaker closed');
  });

  it('lists orders oldest first, filters by Status and Needs attention, and pages', async () => {
    await page.getByLabel('Sort').selectOption('oldest'); // it starts at "Newest first"
    const first = await waitForRows('the first page', (ids) => ids.length === PAGE_SIZE);
    expect(first).toEqual(holding.slice(0, PAGE_SIZE));
    const row = orderRows().filter({ hasText: holding[0] });
    expect((await row.innerText()).replace(/\s+/g, ' ')).toMatch(/TRY_SUCCESS c-alice 12\.50 USD \d{4}-\d\d-\d\d \d\d:\d\d:\d\d 0$/);

    await page.getByLabel('Status').selectOption('CONFIRM_PENDING');
    expect(await waitForRows('CONFIRM_PENDING only', (ids) => ids.length === 1)).toEqual([pending]);
    expect(new URL(page.url()).search).toBe('?status=CONFIRM_PENDING&sort=oldest');

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Needs attention').check();
    expect(await waitForRows('needing attention only', (ids) => ids.length === 1)).toEqual([flagged]);
    await page.getByLabel('Needs attention').uncheck();

    await page.getByLabel('Status').selectOption('TRY_SUCCESS');
    await waitForRows('page 1 of TRY_SUCCESS', (ids) => ids.length === PAGE_SIZE && ids[0] === holding[0]);
    expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Next page' }).click();
    // While the page loads its table can be empty for a moment: wait for the second page's rows.
    const second = await waitForRows('page 2 of TRY_SUCCESS', (ids) => ids.length === holding.length - PAGE_SIZE + 1 && ids[0] !== holding[0]);
    expect(second).toEqual([...holding.slice(PAGE_SIZE), flagged]);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    expect(await waitForRows('page 1 again', (ids) => ids[0] === holding[0])).toEqual(holding.slice(0, PAGE_SIZE));
  });

  it('an order page: Force cancel asks for a Reason and shows the new status without a reload; the Timeline lists every event, newest last', async () => {
    const id = holding[1];
    await page.getByRole('link', { name: id }).click();
    await page.getByRole('heading', { name: `Order ${id}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/orders/${id}`);
    const details = page.getByRole('region', { name: 'Details' });
    await details.getByText('TRY_SUCCESS', { exact: true }).waitFor();
    const text = (await details.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('Customer c-bob');
    expect(text).toContain('Amount 25.00 USD');
    expect(text).toMatch(/Expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(text).toContain('Attempts 0');
    expect(text).toContain('Refund status —');
    expect(text).toContain(`${sku} 2 12.50 USD 25.00 USD default: 2`);
    await page.evaluate(() => ((globalThis as any).notReloaded = true));

    await page.getByRole('button', { name: 'Force cancel' }).click();
    await page.getByText('Force cancel needs a reason').waitFor();
    expect((await h.api.admin('GET', `/admin/orders/${id}`)).body.status).toBe('TRY_SUCCESS');

    await page.getByLabel('Reason').fill('customer phoned to cancel, ticket OPS-7');
    await page.getByRole('button', { name: 'Force cancel' }).click();
    // It asks first, naming the order and its amount; nothing has happened yet.
    const ask = page.getByRole('alertdialog', { name: 'Confirm force cancel' });
    expect((await ask.innerText()).replace(/\s+/g, ' ')).toContain(`Force-cancel order ${id} for 25.00 USD?`);
    expect((await h.api.admin('GET', `/admin/orders/${id}`)).body.status).toBe('TRY_SUCCESS');
    await ask.getByRole('button', { name: 'Yes, force cancel' }).click();
    await details.getByText('CANCELED', { exact: true }).waitFor();
    await page.getByText('the order is now CANCELED').waitFor();
    expect(await page.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
    expect((await h.api.admin('GET', `/admin/orders/${id}`)).body.status).toBe('CANCELED');

    const events = (await h.api.admin('GET', `/admin/orders/${id}/events`)).body.data as { type: string }[];
    const timeline = page.getByRole('region', { name: 'Timeline' }).getByRole('listitem');
    await waitFor('the timeline to show every event', async () => (await timeline.count()) === events.length);
    const items = await timeline.allInnerTexts();
    events.forEach((e, i) => expect(items[i]).toContain(e.type)); // the API's order: oldest first, newest last
    expect(items.some((t) => t.includes('operator.force_cancel') && t.includes('customer phoned to cancel, ticket OPS-7'))).toBe(true);
  });

  it('Force confirm from a link to the order page', async () => {
    const id = holding[2];
    await page.goto(`${h.svc.url}/console/orders/${id}`);
    const details = page.getByRole('region', { name: 'Details' });
    await details.getByText('TRY_SUCCESS', { exact: true }).waitFor();
    await page.getByLabel('Reason').fill('paid by bank transfer');
    await page.getByRole('button', { name: 'Force confirm' }).click();
    await page.getByRole('button', { name: 'Yes, force confirm' }).click();
    await details.getByText('CONFIRM_SUCCESS', { exact: true }).waitFor();
    expect((await h.api.admin('GET', `/admin/orders/${id}`)).body.status).toBe('CONFIRM_SUCCESS');
    await page.getByRole('region', { name: 'Timeline' }).getByText('reason: paid by bank transfer', { exact: true }).waitFor();
  });

  it('Retry now runs a CONFIRM_PENDING order now and shows its new status without a reload', async () => {
    await page.goto(`${h.svc.url}/console/orders/${pending}`);
    const details = page.getByRole('region', { name: 'Details' });
    await details.getByText('CONFIRM_PENDING', { exact: true }).waitFor();
    expect((await details.innerText()).replace(/\s+/g, ' ')).toContain('Attempts 1');
    await page.evaluate(() => ((globalThis as any).notReloaded = true));
    await page.getByRole('button', { name: 'Retry now' }).click();
    await details.getByText('CONFIRM_SUCCESS', { exact: true }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
    expect((await h.api.admin('GET', `/admin/orders/${pending}`)).body.status).toBe('CONFIRM_SUCCESS');
    await page.getByRole('region', { name: 'Timeline' }).getByText('operator.retry_now').waitFor();
  });

  it('inventory: looks a SKU up and sets its on-hand stock', async () => {
    await page.getByRole('link', { name: 'Inventory' }).click();
    await page.getByRole('heading', { name: 'Inventory' }).waitFor();
    await page.getByLabel('SKU').fill('NO-SUCH-SKU');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('There is no SKU NO-SUCH-SKU').waitFor();

    const before = (await h.api.get(`/inventory/${sku}`)).body;
    await page.getByLabel('SKU').fill(sku);
    await page.getByRole('button', { name: 'Look up' }).click();
    const onHand = page.getByLabel('On hand');
    await onHand.waitFor();
    expect(await onHand.inputValue()).toBe(String(before.onHand));

    await onHand.fill(String(before.reserved - 1));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/Not saved: .*reserved/i).waitFor();
    expect((await h.api.get(`/inventory/${sku}`)).body.onHand).toBe(before.onHand);

    await page.getByLabel('On hand').fill('750');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved: ${sku} has 750 on hand`).waitFor();
    expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ onHand: 750, reserved: before.reserved, priceMinor: 1250, currency: 'USD' });
  });

  it('the console fetched nothing from anywhere but the service and broke no CSP rule', () => {
    expect(external).toEqual([]);
    expect(cspErrors).toEqual([]);
  });

  it('the session opens the queue dashboard in the same browser', async () => {
    const api = page.waitForResponse((r) => new URL(r.url()).pathname === '/admin/queues/api/queues');
    await page.getByRole('link', { name: 'Queue dashboard' }).click();
    await page.waitForURL(`${h.svc.url}/admin/queues`);
    expect((await api).status()).toBe(200); // the dashboard's own API calls ride on the session too
    await page.getByText('confirm-retry').first().waitFor();
    await page.getByText(/^\d+ Jobs?$/).first().waitFor();
    expect((await send('GET', '/admin/queues', {})).status).toBe(401); // without the cookie
  });

  it('a state change with the session cookie but without its X-CSRF-Token is refused 403', async () => {
    const cookie = `tcc_console=${await sessionCookie()}`;
    const put = { name: sku, priceMinor: 1250, currency: 'USD', onHand: 700 };
    for (const headers of [{ cookie }, { cookie, 'x-csrf-token': 'not-the-token' }] as Record<string, string>[]) {
      const res = await send('PUT', `/admin/inventory/${sku}`, headers, put);
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect((await json(res)).code).toBe('FORBIDDEN');
      expect((await send('POST', `/admin/orders/${holding[3]}/force-cancel`, headers, { reason: 'csrf' })).status).toBe(403);
    }
    expect((await h.api.get(`/inventory/${sku}`)).body.onHand).toBe(750);
    expect((await h.api.admin('GET', `/admin/orders/${holding[3]}`)).body.status).toBe('TRY_SUCCESS');

    // Reads need no CSRF token; the cookie never opens the participant API.
    expect((await send('GET', '/admin/orders?limit=1', { cookie })).status).toBe(200);
    expect((await send('POST', '/tcc/inventory/cancel', { cookie }, { transactionId: 't-1' })).status).toBe(401);

    const session = await json(await send('GET', '/console/session', { cookie }));
    expect((await send('PUT', `/admin/inventory/${sku}`, { cookie, 'x-csrf-token': session.csrfToken }, put)).status).toBe(200);
    expect((await h.api.get(`/inventory/${sku}`)).body.onHand).toBe(700);
  });

  it('Sign out ends the session: the old cookie is refused afterwards', async () => {
    const old = await sessionCookie();
    expect(old).toBeDefined();
    await page.goto(`${h.svc.url}/console`);
    await waitForRows('the first page', (ids) => ids.length === PAGE_SIZE);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    await page.getByText('You have signed out').waitFor();
    expect(await sessionCookie()).toBeUndefined();
    const cookie = `tcc_console=${old}`;
    for (const path of ['/admin/orders', '/admin/stats', '/admin/queues', '/console/session']) {
      const res = await send('GET', path, { cookie }, undefined, true);
      expect(res.status).toBe(401);
      expect((await json(res)).code).toBe('UNAUTHORIZED');
    }
    await page.reload();
    await page.getByLabel('Admin token').waitFor();
  });
});

describe('console sessions over HTTP', () => {
  async function signIn(headers: Record<string, string> = {}): Promise<{ cookie: string; csrfToken: string; setCookie: string }> {
    const res = await send('POST', '/console/session', headers, { token: ADMIN_TOKEN });
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie') ?? '';
    const body = await json(res);
    return { cookie: setCookie.split(';')[0], csrfToken: body.csrfToken, setCookie };
  }

  it('sets the cookie with Max-Age from CONSOLE_SESSION_TTL_MS, Secure behind https, and answers the CSRF token and expiry', async () => {
    const plain = await signIn();
    expect(plain.setCookie).toMatch(/^tcc_console=[A-Za-z0-9_-]{43}; Max-Age=28800; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(plain.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const https = await signIn({ 'x-forwarded-proto': 'https' });
    expect(https.setCookie).toMatch(/; Secure$/);
    const current = await send('GET', '/console/session', { cookie: plain.cookie });
    expect(current.status).toBe(200);
    const body = await json(current);
    expect(body.csrfToken).toBe(plain.csrfToken);
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(28_800_000 - 60_000);
    expect(current.headers.get('cache-control')).toBe('no-store');
  });

  /** The row key: SHA-256 of the session id (src/console/console-sessions.ts). */
  const rowKey = (cookie: string) => createHash('sha256').update(cookie.split('=')[1]).digest();

  it('stores only a hash of the session id', async () => {
    const { cookie, csrfToken } = await signIn();
    const id = cookie.split('=')[1];
    const rows = await h.db.query<{ id_hash: Buffer; csrf_token: string }>('SELECT id_hash, csrf_token FROM console_sessions WHERE id_hash = $1', [rowKey(cookie)]);
    // (the token tag beside it: test/cursor-key)
    expect(rows).toEqual([{ id_hash: rowKey(cookie), csrf_token: csrfToken }]);
    // The id itself is nowhere (its SHA-256 is enough: 32 random bytes have no preimage to find).
    const anywhere = await h.db.query(`SELECT 1 FROM console_sessions s WHERE position($1 IN row_to_json(s)::text) > 0`, [id]);
    expect(anywhere).toEqual([]);
  });

  it('an expired session is refused and deleted', async () => {
    const { cookie } = await signIn();
    expect(await h.db.query('UPDATE console_sessions SET expires_at = now() - interval \'1 second\' WHERE id_hash = $1 RETURNING 1', [rowKey(cookie)])).toHaveLength(1);
    const res = await send('GET', '/admin/stats', { cookie }, undefined, true);
    expect(res.status).toBe(401);
    expect(await h.db.query('SELECT 1 FROM console_sessions WHERE id_hash = $1', [rowKey(cookie)])).toEqual([]);
    expect((await send('GET', '/console/session', { cookie }, undefined, true)).status).toBe(401);
  });

  it('sign-out needs the CSRF token; a bearer request needs none', async () => {
    const { cookie, csrfToken } = await signIn();
    const refused = await send('DELETE', '/console/session', { cookie });
    expect(refused.status).toBe(403);
    expect((await json(refused)).code).toBe('FORBIDDEN');
    expect((await send('GET', '/admin/stats', { cookie })).status).toBe(200);
    const out = await send('DELETE', '/console/session', { cookie, 'x-csrf-token': csrfToken });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^tcc_console=; Max-Age=0/);
    expect((await send('GET', '/admin/stats', { cookie }, undefined, true)).status).toBe(401);
    expect((await send('DELETE', '/console/session', { cookie, 'x-csrf-token': csrfToken }, undefined, true)).status).toBe(401);

    const bearer = await send('PUT', `/admin/inventory/${sku}`, { authorization: `Bearer ${ADMIN_TOKEN}` }, { priceMinor: 1250, currency: 'USD', onHand: 701 });
    expect(bearer.status).toBe(200);
  });

  it('GET /admin/stats: orders by status, needing attention, the breaker (bearer or session)', async () => {
    const res = await h.api.admin('GET', '/admin/stats');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ordersByStatus: { TRY_SUCCESS: holding.length - 2 + 1, CONFIRM_PENDING: 0, CONFIRM_SUCCESS: 2, PAY_FAILED: 0, CANCELED: 1 },
      needingAttention: 1,
      breaker: 'closed',
    });
    expect((await send('GET', '/admin/stats', {})).status).toBe(401);
  });

  it('bad sign-in bodies are contract errors', async () => {
    for (const body of [{}, { token: '' }, { token: 5 }, { token: ADMIN_TOKEN, extra: 1 }]) {
      const res = await send('POST', '/console/session', {}, body);
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('VALIDATION_FAILED');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const malformed = await fetch(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(malformed.status).toBe(400);
    expect((await json(malformed)).code).toBe('MALFORMED_JSON');
  });
});
