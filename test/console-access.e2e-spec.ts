import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { call, makeKey, makeOperator, type MadeKey, type MadeOperator } from './support/access.js';
import { axe, openBrowser, pageWidth, shot, text, viewport, WIDTHS, type Browser } from './support/browser.js';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { fetchFromAddress, waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * The console's identity and access (API.md, "Operator console" and "Identity and access"): sign-in
 * by email and password, the header naming the operator and their role, only the actions a role
 * allows, and the admin pages (API keys, Operators, Audit), at 1440 and 390 px.
 */
// Refused sessions below are wrong credentials from 127.0.0.1: a short window keeps the address's throttle out of the way.
// No order of the file expires while it runs (a loaded run takes longer than the suite's 60 s TTL).
const h = useHarness({ CREDENTIAL_THROTTLE_WINDOW_MS: '1000', RESERVATION_TTL_MS: '900000' });

let b: Browser;
let page: Page;
let order: string;
const sku = uniqueSku('ACCESS');
const ops = {} as Record<'viewer' | 'operator' | 'stock' | 'admin', MadeOperator>;
const run = randomUUID().slice(0, 6);

const region = (name: string) => page.getByRole('region', { name, exact: true });
const nav = () => page.getByRole('navigation', { name: 'Console' });
const button = (name: string) => page.getByRole('button', { name, exact: true });

async function signInAs(op: { email: string; password: string }, p = page): Promise<void> {
  await p.goto(`${h.svc.url}/console`);
  await p.getByLabel('Email').fill(op.email);
  await p.getByLabel('Password').fill(op.password);
  await p.getByRole('button', { name: 'Sign in', exact: true }).click();
  await p.getByRole('button', { name: 'Sign out' }).waitFor();
}

async function signOut(): Promise<void> {
  await button('Sign out').click();
  await page.getByLabel('Email').waitFor();
}

/** Waits for the page's list, then counts what it should not offer. */
async function absent(...names: string[]): Promise<Record<string, number>> {
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, await page.getByRole('button', { name: n, exact: true }).count()])));
}

beforeAll(async () => {
  expect((await h.api.putSku(sku, 50, 1250)).status).toBe(200);
  const res = await h.api.order(randomUUID(), { customerId: 'c-access', items: [{ sku, quantity: 1 }] });
  expect(res.status).toBe(201);
  order = res.body.id;
  ops.viewer = await makeOperator(h.svc.url, 'viewer', 'Vera Viewer');
  ops.operator = await makeOperator(h.svc.url, 'operator', 'Otto Operator');
  ops.stock = await makeOperator(h.svc.url, 'stock', 'Sam Stock');
  ops.admin = await makeOperator(h.svc.url, 'admin', 'Ada Admin');
  b = await openBrowser(h.svc.url);
  page = b.page;
}, 60_000);

afterAll(async () => {
  await b?.close();
});

describe('console: sign-in by account', () => {
  it('Email and Password, the admin token behind "Sign in with the admin token"; wrong sign-ins and the account throttle in words', async () => {
    await page.goto(`${h.svc.url}/console`);
    await page.getByLabel('Email').waitFor();
    expect(await page.getByLabel('Admin token').count()).toBe(0);
    for (const width of WIDTHS) {
      await page.setViewportSize(viewport(width));
      expect(await pageWidth(page)).toBe(width);
      await shot(page, `sign-in-account-${width}`);
    }
    await page.setViewportSize(viewport(1440));
    expect(await axe(page)).toEqual([]);
    await button('Sign in with the admin token').click();
    await page.getByLabel('Admin token').waitFor();
    await page.getByLabel('Your name').waitFor();
    await button('Use an operator account instead').click();

    // A wrong password and an unknown email get the same words.
    for (const [email, password] of [[ops.viewer.email, 'not-the-password-1'], [`nobody-${run}@example.test`, 'not-the-password-1']]) {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await button('Sign in').click();
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password. Check them and try again.' }).waitFor();
      await page.waitForTimeout(1100); // the address's window
    }
    await page.getByLabel('Password').fill('');
    await button('Sign in').click();
    await page.getByRole('alert').filter({ hasText: 'Enter your password.' }).waitFor();

    // 10 wrong passwords for one account (from other addresses): its sign-in waits, the right password too.
    const locked = await makeOperator(h.svc.url, 'viewer', 'Lee Locked');
    for (let i = 0; i < 10; i++) {
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: locked.email, password: `wrong-${i}-password` }) };
      expect((await fetchFromAddress(`${h.svc.url}/console/session`, init, `127.66.${i >> 1}.${(i & 1) + 1}`)).status).toBe(401);
    }
    await page.getByLabel('Email').fill(locked.email);
    await page.getByLabel('Password').fill(locked.password);
    await button('Sign in').click();
    await page.getByRole('alert').filter({ hasText: /^Too many wrong passwords for this account: its sign-in is refused for now\. Try again in \d+ min\.$/ }).waitFor();
    expect((await b.context.cookies(h.svc.url)).find((c) => c.name === 'tcc_console')).toBeUndefined();
    // However the email is spelled: every spelling the lookup folds into this account waits too
    // (Postgres folds U+0130 'İ' to 'i' where its locale does; JavaScript folds it to 'i̇').
    const dotted = locked.email.replace('i', '\u0130');
    const [{ folds }] = await h.db.query<{ folds: boolean }>(`SELECT lower($1) = lower($2) AS folds`, [dotted, locked.email]);
    for (const [spelling, status] of [[locked.email.toUpperCase(), 429], [dotted, folds ? 429 : 401]] as const) {
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: spelling, password: locked.password }) };
      expect({ spelling, status: (await fetchFromAddress(`${h.svc.url}/console/session`, init, '127.66.9.1')).status }).toEqual({ spelling, status });
    }
  });
});

describe('console: sign-in from another site', () => {
  it("a sign-in form posted from another site's page (login CSRF) is refused 403, sets no session and is audited; the console's own form still signs in", async () => {
    // The other site: a page on "localhost" (the console is on 127.0.0.1, another site) whose form
    // posts a JSON body as text/plain, as a form can — `name=value`, the "=" inside the JSON's last
    // string — to sign the visitor in as whoever that site chose (here with the token, as "=Mallory").
    const form = `<!doctype html><form method="post" enctype="text/plain" action="${h.svc.url}/console/session"><input type="hidden" name='{"token":"${ADMIN_TOKEN}","name":"' value='Mallory"}'></form>`;
    const site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(form));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const other = await b.context.newPage();
    try {
      await other.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
      const [answer] = await Promise.all([other.waitForResponse(`${h.svc.url}/console/session`), other.evaluate('document.forms[0].submit()')]);
      expect(answer.status()).toBe(403);
      expect(answer.headers()['set-cookie']).toBeUndefined();
      expect((await b.context.cookies(h.svc.url)).find((c) => c.name === 'tcc_console')).toBeUndefined();
      // Audited as a failed sign-in (written after the answer: awaited).
      await waitFor('the refused sign-in in the audit log', async () =>
        (await h.db.query(`SELECT 1 FROM audit_log WHERE action = 'sign_in' AND target = 'admin token' AND outcome = 403 AND principal_name IS NULL`)).length === 1,
      );
    } finally {
      await other.close();
      site.close();
    }
    await signInAs(ops.viewer);
    await signOut();
  });

  it('a browser without Fetch Metadata is judged by its Origin: another host refused 403, the console\'s own signs in', async () => {
    const post = (origin: string) =>
      new Promise<{ status: number; cookie: boolean }>((resolve, reject) => {
        const req = httpRequest(`${h.svc.url}/console/session`, { method: 'POST', headers: { 'content-type': 'text/plain', origin } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, cookie: (res.headers['set-cookie'] ?? []).some((c) => c.startsWith('tcc_console=')) }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ token: ADMIN_TOKEN, name: 'Origin check' }));
      });
    expect(await post('http://evil.example')).toEqual({ status: 403, cookie: false });
    expect(await post('null')).toEqual({ status: 403, cookie: false });
    expect(await post(h.svc.url)).toEqual({ status: 200, cookie: true });
  });
});

describe('console: only what the role allows', () => {
  it('viewer: the header names them and their role; no write action on any page, no admin page; a forged change is refused 403', async () => {
    await signInAs(ops.viewer);
    expect(await text(page.locator('header .who-name'))).toBe('Signed in as Vera Viewer (viewer)');
    expect(await nav().getByRole('link').allInnerTexts()).toEqual(['Orders', 'Inventory', 'Locations']);

    await page.getByText(/^\d+ orders?$/).waitFor();
    expect(await absent('Cancel matching')).toEqual({ 'Cancel matching': 0 });
    await page.goto(`${h.svc.url}/console/orders/${order}`);
    await region('Timeline').getByRole('listitem').first().waitFor();
    await region('Actions').getByText('None for your role').waitFor();
    expect(await absent('Force confirm', 'Force cancel', 'Retry now', 'Acknowledge')).toEqual({ 'Force confirm': 0, 'Force cancel': 0, 'Retry now': 0, Acknowledge: 0 });

    await page.goto(`${h.svc.url}/console/inventory?sku=${sku}`);
    await page.getByRole('link', { name: `${sku}: locations and movements` }).waitFor();
    expect(await page.getByLabel('On hand').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Import from a file' }).count()).toBe(0);
    await page.goto(`${h.svc.url}/console/inventory/${sku}`);
    await region('Movements').locator('tbody tr').first().waitFor();
    expect(await absent('Adjust')).toEqual({ Adjust: 0 });
    expect(await page.getByLabel('Delta').count()).toBe(0);
    await page.goto(`${h.svc.url}/console/locations`);
    await page.getByRole('cell', { name: 'default', exact: true }).waitFor();
    expect(await absent('Save')).toEqual({ Save: 0 });
    expect(await page.getByRole('button', { name: /^Change / }).count()).toBe(0);
    expect(await page.getByLabel('Location id').count()).toBe(0);
    for (const path of ['/console/inventory/import', '/console/webhooks', '/console/api-keys', '/console/operators', '/console/audit']) {
      await page.goto(`${h.svc.url}${path}`);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      expect(await absent('Check', 'Resend', 'Make key', 'Add operator', 'Apply')).toEqual({ Check: 0, Resend: 0, 'Make key': 0, 'Add operator': 0, Apply: 0 });
    }

    // What the page does not offer, sent anyway with the session and its anti-CSRF token: 403, nothing changes.
    const forged = await page.evaluate(async (id) => {
      const session = (await (await fetch('/console/session')).json()) as { csrfToken: string };
      const res = await fetch(`/admin/orders/${id}/force-cancel`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken }, body: JSON.stringify({ reason: 'forged' }) });
      return { status: res.status, body: (await res.json()) as { code?: string; requiredScope?: string } };
    }, order);
    expect({ status: forged.status, code: forged.body.code, requiredScope: forged.body.requiredScope }).toEqual({ status: 403, code: 'FORBIDDEN', requiredScope: 'orders:write' });
    expect((await h.api.admin('GET', `/admin/orders/${order}`)).body.status).toBe('TRY_SUCCESS');
    await signOut();
  });

  it("operator: the orders' actions, no stock change; stock: the stock changes, no order action", async () => {
    await signInAs(ops.operator);
    expect(await text(page.locator('header .who-name'))).toBe('Signed in as Otto Operator (operator)');
    await button('Cancel matching').waitFor();
    await page.goto(`${h.svc.url}/console/orders/${order}`);
    await region('Actions').getByRole('button', { name: 'Force cancel' }).waitFor();
    await page.goto(`${h.svc.url}/console/inventory/${sku}`);
    await region('Movements').locator('tbody tr').first().waitFor();
    expect(await absent('Adjust')).toEqual({ Adjust: 0 });
    await page.goto(`${h.svc.url}/console/inventory?sku=${sku}`);
    await page.getByRole('link', { name: `${sku}: locations and movements` }).waitFor();
    expect(await page.getByLabel('On hand').count()).toBe(0);
    expect(await nav().getByRole('link').allInnerTexts()).toEqual(['Orders', 'Inventory', 'Locations']);
    await signOut();

    await signInAs(ops.stock);
    expect(await text(page.locator('header .who-name'))).toBe('Signed in as Sam Stock (stock)');
    await page.getByText(/^\d+ orders?$/).waitFor();
    expect(await absent('Cancel matching')).toEqual({ 'Cancel matching': 0 });
    await page.goto(`${h.svc.url}/console/orders/${order}`);
    await region('Actions').getByText('None for your role').waitFor();
    expect(await absent('Force confirm', 'Force cancel')).toEqual({ 'Force confirm': 0, 'Force cancel': 0 });
    await page.goto(`${h.svc.url}/console/inventory?sku=${sku}`);
    await page.getByLabel('On hand').waitFor();
    await page.getByRole('link', { name: 'Import from a file' }).waitFor();
    await page.goto(`${h.svc.url}/console/inventory/${sku}`);
    await button('Adjust').waitFor();
    await page.goto(`${h.svc.url}/console/locations`);
    await button('Save').waitFor();
    await page.goto(`${h.svc.url}/console/webhooks`);
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    await signOut();
  });
});

describe('console: the admin pages', () => {
  let keyName: string;

  it('admin: every page in the navigation; API keys: a key made is shown once with a copy button, never again, and revoked it is refused', async () => {
    await signInAs(ops.admin);
    expect(await text(page.locator('header .who-name'))).toBe('Signed in as Ada Admin (admin)');
    expect(await nav().getByRole('link').allInnerTexts()).toEqual(['Orders', 'Inventory', 'Locations', 'Webhooks', 'API keys', 'Operators', 'Audit', 'Queue dashboard']);
    await nav().getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

    keyName = `feed-${run}`;
    await button('Make key').click();
    await page.getByRole('alert').filter({ hasText: 'Not made: Name must be 1-100 characters.' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill(keyName);
    await button('Make key').click();
    await page.getByRole('alert').filter({ hasText: 'Not made: choose at least one scope.' }).waitFor();
    await page.getByRole('checkbox', { name: /^orders:read/ }).check();
    await button('Make key').click();
    const secret = region(`New key: ${keyName}`);
    await secret.getByText('Copy this key now: it will not be shown again.').waitFor();
    const key = await text(secret.locator('code.secret-key'));
    expect(key).toMatch(/^tcc_[A-Za-z0-9_-]{43}$/);
    await secret.getByRole('button', { name: 'Copy key' }).click();
    await secret.getByRole('button', { name: 'Copied', exact: true }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(key);
    expect((await call(h.svc.url, 'GET', '/admin/orders?limit=1', { bearer: key })).status).toBe(200);
    const row = page.getByRole('row').filter({ hasText: keyName });
    await row.waitFor();
    expect(await text(row)).toContain(`${key.slice(0, 12)}…`);
    for (const width of WIDTHS) {
      await page.setViewportSize(viewport(width));
      expect(await pageWidth(page)).toBe(width);
      await shot(page, `api-key-made-${width}`);
    }
    await page.setViewportSize(viewport(1440));
    expect(await axe(page)).toEqual([]);

    // Never again: not after a reload, not in any answer.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(key);
    expect(JSON.stringify((await call(h.svc.url, 'GET', '/admin/api-keys?limit=1000')).body)).not.toContain(key);

    await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
    await page.getByRole('alertdialog', { name: `Revoke ${keyName}` }).getByText('refused within 5 s').waitFor();
    await button(`Yes, revoke ${keyName}`).click();
    await page.getByText(`Revoked ${keyName}`).waitFor();
    await row.getByText('Revoked', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: `Revoke ${keyName}` }).count()).toBe(0);
    await waitFor('the revoked key to be refused', async () => (await call(h.svc.url, 'GET', '/admin/orders?limit=1', { bearer: key })).status === 401, 5000);
  });

  it("Operators: add one (refusals in words), change a role, disable one — whose next page load goes to sign-in within 5 s", async () => {
    await page.goto(`${h.svc.url}/console/operators`);
    await page.getByRole('row').filter({ hasText: ops.viewer.email }).waitFor();
    const form = region('Add an operator');
    const email = `new-${run}@example.test`;
    await form.getByLabel('Email').fill(email);
    await form.getByLabel('Name').fill('Nia New');
    await form.getByLabel('Role').selectOption('operator');
    await form.getByLabel('Password').fill('short');
    await button('Add operator').click();
    await form.getByRole('alert').filter({ hasText: 'Not added: Password must be at least 12 characters.' }).waitFor();
    const password = `pw-${randomUUID()}`;
    await form.getByLabel('Password').fill(password);
    await button('Add operator').click();
    await form.getByText(`Added Nia New (${email}) as operator.`).waitFor();
    await form.getByLabel('Email').fill(email.toUpperCase());
    await form.getByLabel('Name').fill('Nia Again');
    await form.getByLabel('Password').fill(password);
    await button('Add operator').click();
    await form.getByRole('alert').filter({ hasText: 'already exists' }).waitFor();

    // Nia signs in elsewhere; her role changes, then she is disabled.
    const other = await openBrowser(h.svc.url);
    try {
      await signInAs({ email, password }, other.page);
      await page.getByRole('button', { name: `Change ${email}` }).click();
      const editor = region('Change Nia New');
      await editor.getByLabel('Role').selectOption('stock');
      await editor.getByRole('button', { name: 'Save role' }).click();
      await region('Change Nia New').getByText('Role changed to stock for Nia New: their console sessions end within 5 s.').waitFor();
      await page.getByRole('row').filter({ hasText: email }).getByText('stock', { exact: true }).waitFor();
      await other.context.clearCookies();
      await signInAs({ email, password }, other.page);
      await other.page.getByText('Signed in as Nia New (stock)').waitFor();
      for (const width of WIDTHS) {
        await page.setViewportSize(viewport(width));
        expect(await pageWidth(page)).toBe(width);
        await shot(page, `operators-${width}`);
      }
      await page.setViewportSize(viewport(1440));
      expect(await axe(page)).toEqual([]);

      await region('Change Nia New').getByRole('button', { name: 'Disable' }).click();
      await button('Yes, disable Nia New').click();
      const disabledAt = Date.now();
      await region('Change Nia New').getByText('Disabled Nia New').waitFor();
      await page.getByRole('row').filter({ hasText: email }).getByText('Disabled').waitFor();
      await waitFor(
        'her next page load to go to sign-in',
        async () => {
          await other.page.goto(`${h.svc.url}/console`);
          await other.page.getByLabel('Email').or(other.page.getByRole('button', { name: 'Sign out' })).first().waitFor();
          return other.page.getByLabel('Email').isVisible();
        },
        5000,
      );
      expect(Date.now() - disabledAt).toBeLessThan(5000);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('Audit: newest first, what was done here, filtered by principal and by action, paged', async () => {
    // More than a page of one action.
    for (let i = 0; i < 52; i++) expect((await call(h.svc.url, 'PATCH', `/admin/operators/${ops.stock.id}`, { body: { name: `Sam Stock ${i}` } })).status).toBe(200);
    await page.goto(`${h.svc.url}/console/audit`);
    const table = page.getByRole('group', { name: 'Audit table' });
    await table.locator('tbody tr').first().waitFor();
    const times = await table.locator('tbody tr time').evaluateAll((els) => els.map((e: any) => e.getAttribute('datetime')));
    expect([...times].sort().reverse()).toEqual(times);

    await page.getByLabel('Principal').selectOption({ label: `Ada Admin <${ops.admin.email}>` });
    await waitFor('only Ada', async () => {
      const who = await table.locator('td[data-label="Who"]').allInnerTexts();
      return who.length > 0 && who.every((w) => w === 'Ada Admin (operator)') && who;
    });
    const actions = await table.locator('td[data-label="Action"]').allInnerTexts();
    for (const a of ['api_key.created', 'api_key.revoked', 'operator.created', 'operator.changed', 'sign_in']) expect(actions).toContain(a);
    expect(new URL(page.url()).searchParams.get('principal')).toBe(ops.admin.id);
    for (const width of WIDTHS) {
      await page.setViewportSize(viewport(width));
      expect(await pageWidth(page)).toBe(width);
      await shot(page, `audit-${width}`);
    }
    await page.setViewportSize(viewport(1440));
    expect(await axe(page)).toEqual([]);

    // The viewer's forged force-cancel, refused.
    await page.getByLabel('Principal').selectOption({ label: `Vera Viewer <${ops.viewer.email}>` });
    await page.getByLabel('Action', { exact: true }).fill('POST /admin/orders/{id}/force-cancel');
    await button('Apply').click();
    await waitFor('the refused force-cancel', async () => (await table.locator('tbody tr').allInnerTexts()).some((r) => r.includes('403 refused') && r.includes(order)));

    await page.getByLabel('Principal').selectOption('');
    await page.getByLabel('Action', { exact: true }).fill('operator.changed');
    await button('Apply').click();
    await waitFor('a full page of operator.changed', async () => {
      const a = await table.locator('td[data-label="Action"]').allInnerTexts();
      return a.length === 50 && a.every((x) => x === 'operator.changed');
    });
    await button('Next page').click();
    await page.getByText('Page 2').waitFor();
    const second = await table.locator('td[data-label="Action"]').allInnerTexts();
    expect(second.length).toBeGreaterThan(0);
    expect(second.every((x) => x === 'operator.changed')).toBe(true);
    await button('Previous page').click();
    await page.getByText('Page 1').waitFor();
  }, 60_000);

  it('Audit: every principal can be chosen, also a key made after the first 200', async () => {
    // More keys than one page of the list the filter once stopped at; the last one changes stock.
    const made: MadeKey[] = [];
    for (let i = 0; i < 201; i += 20) {
      const batch = Array.from({ length: Math.min(20, 201 - i) }, (_, j) => makeKey(h.svc.url, i + j === 200 ? ['inventory:write'] : ['orders:read'], `many-${run}-${String(i + j).padStart(3, '0')}`));
      made.push(...(await Promise.all(batch)));
    }
    const last = made[200];
    expect((await call(h.svc.url, 'GET', '/admin/api-keys?limit=200')).body.data.map((k: { id: string }) => k.id)).not.toContain(last.id);
    const stocked = uniqueSku('MANY');
    expect((await call(h.svc.url, 'PUT', `/admin/inventory/${stocked}`, { bearer: last.key, body: { priceMinor: 100, currency: 'USD', onHand: 3 } })).status).toBe(200);

    await page.goto(`${h.svc.url}/console/audit`);
    const table = page.getByRole('group', { name: 'Audit table' });
    await table.locator('tbody tr').first().waitFor();
    await page.getByLabel('Principal').selectOption({ label: `many-${run}-200 (${last.prefix}…)` });
    await waitFor('only the last key', async () => {
      const who = await table.locator('td[data-label="Who"]').allInnerTexts();
      return who.length === 1 && who[0] === `many-${run}-200 (API key)`;
    });
    expect(await table.locator('td[data-label="Action"]').allInnerTexts()).toEqual(['PUT /admin/inventory/{sku}']);
    expect(await table.locator('td[data-label="Target"]').allInnerTexts()).toEqual([stocked]);
    expect(new URL(page.url()).searchParams.get('principal')).toBe(last.id);
    // Every key and operator is offered, each once.
    const offered = await page.getByLabel('Principal').locator('option').evaluateAll((os) => os.map((o: any) => o.value as string));
    for (const k of made) expect(offered.filter((v) => v === k.id)).toHaveLength(1);
    for (const op of Object.values(ops)) expect(offered.filter((v) => v === op.id)).toHaveLength(1);
    await shot(page, 'audit-many-keys-1440');

    // A link to it, opened afresh, shows it chosen.
    await page.reload();
    await waitFor('the key chosen after a reload', async () => (await page.getByLabel('Principal').locator('option:checked').innerText()) === `many-${run}-200 (${last.prefix}…)`);
  }, 90_000);
});
