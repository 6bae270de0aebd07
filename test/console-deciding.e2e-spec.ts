import { randomUUID } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { axe, openBrowser, shot, signIn, text, viewport, type Browser } from './support/browser.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * "Deciding safely" (API.md, "Operator console", third part): an order's Payment and Timeline come
 * before its actions; when the gateway cannot be asked, Payment says so in words and the force
 * actions' confirmations say the payment could not be checked; the page asks again as it refreshes
 * and shows the payment once the gateway answers. With the simulator down, then up, and a short
 * breaker reset.
 */
const h = useHarness({ CONFIRM_RETRY_BASE_MS: '600000', RESERVATION_TTL_MS: '900000', BREAKER_VOLUME_THRESHOLD: '2', BREAKER_RESET_TIMEOUT_MS: '3000' });

let b: Browser;
let page: Page;
let charged: string; // CONFIRM_PENDING, though the gateway did charge it: 12.50 USD
const sku = uniqueSku('DECIDE');

const region = (name: string) => page.getByRole('region', { name, exact: true });

/** Where each named part of the page starts, top to bottom. */
async function top(l: Locator): Promise<number> {
  return (await l.boundingBox())!.y;
}

async function order(): Promise<string> {
  const res = await h.api.order(randomUUID(), { customerId: 'c-decide', items: [{ sku, quantity: 1 }] });
  if (res.status !== 201) throw new Error(`Try -> ${res.status}`);
  return res.body.id;
}

beforeAll(async () => {
  expect((await h.api.putSku(sku, 50, 1250)).status).toBe(200);
  charged = await order();
  await h.sim.script(['charge_then_error']);
  expect((await h.api.post(`/orders/${charged}/confirm`)).status).toBe(202);
  // The gateway goes down: the next charge fails too, and two failures open the breaker.
  await h.sim.setFaults({ down: true });
  expect((await h.api.post(`/orders/${await order()}/confirm`)).status).toBe(202);
  await waitFor('the breaker to open', async () => (await h.api.admin('GET', '/admin/stats')).body.breaker === 'open');
  b = await openBrowser(h.svc.url);
  page = b.page;
  await signIn(page, h.svc.url, 'Dee Cide');
}, 60_000);

afterAll(async () => {
  await b?.close();
});

describe('console: deciding safely', () => {
  it('Payment and Timeline come before the actions, at 1440 and 390 px', async () => {
    for (const width of [390, 1440]) {
      await page.setViewportSize(viewport(width));
      await page.goto(`${h.svc.url}/console/orders/${charged}`);
      await region('Actions').getByRole('button', { name: 'Force confirm' }).waitFor();
      const [payment, timeline, actions] = [await top(region('Payment')), await top(region('Timeline')), await top(region('Actions'))];
      expect({ width, paymentFirst: payment < actions, timelineFirst: timeline < actions }).toEqual({ width, paymentFirst: true, timelineFirst: true });
    }
  });

  it('while the gateway cannot be asked, Payment says so in words and both force confirmations say the payment could not be checked', async () => {
    const payment = region('Payment');
    await payment.getByText(/The gateway cannot be asked now/).waitFor();
    // The breaker is open, or — half-open after its reset — lets one look-up through, which fails.
    expect(await text(payment)).toMatch(/the payment breaker is open|the gateway answered with an error \(HTTP 503\)/);
    expect(await text(payment)).toContain('Whether the customer was charged is not known.');
    await shot(page, 'order-gateway-down-1440');
    expect(await axe(page)).toEqual([]);

    await page.getByLabel('Reason').fill('customer says they paid');
    for (const action of ['Force confirm', 'Force cancel']) {
      await region('Actions').getByRole('button', { name: action }).click();
      const ask = page.getByRole('alertdialog', { name: `Confirm ${action.toLowerCase()}` });
      expect(await text(ask)).toContain('The payment could not be checked: the gateway cannot be asked now.');
      await ask.getByRole('button', { name: 'No, keep it' }).click();
      await ask.waitFor({ state: 'detached' });
    }
    expect((await h.api.admin('GET', `/admin/orders/${charged}`)).body.status).toBe('CONFIRM_PENDING');
  });

  it('once the gateway answers again, the page shows the payment as it refreshes, and the confirmation names it', async () => {
    await h.sim.setFaults({ down: false });
    const payment = region('Payment');
    // Auto-refresh every 10 s asks again; the breaker lets a call through after 3 s.
    await payment.getByRole('table').waitFor({ timeout: 30_000 });
    expect(await text(payment.getByRole('row').nth(1))).toMatch(/succeeded 12\.50 USD 0\.00 USD$/);
    await page.getByLabel('Reason').fill('paid at the gateway');
    await region('Actions').getByRole('button', { name: 'Force confirm' }).click();
    const ask = page.getByRole('alertdialog', { name: 'Confirm force confirm' });
    const said = await text(ask);
    expect(said).toContain(`Force-confirm order ${charged} for 12.50 USD?`);
    expect(said).toContain('The gateway holds a captured payment of 12.50 USD for it.');
    expect(said).not.toContain('could not be checked');
    await ask.getByRole('button', { name: 'Yes, force confirm' }).click();
    await region('Details').getByText('CONFIRM_SUCCESS', { exact: true }).waitFor();
  }, 60_000);
});
