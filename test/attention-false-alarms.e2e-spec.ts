import { randomUUID } from 'node:crypto';
import { attentionProbe } from './support/attention.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * An order that cannot owe anything — a definite decline, a final refusal of its only charge
 * request (and a charge the open breaker kept from ever leaving: attention-breaker.e2e-spec.ts) —
 * never needs attention and is never put on a refund watch (API.md, "Admin API"), however long
 * the gateway stays away afterwards.
 * Orders whose charge did leave with an unknown outcome still raise the alarm after
 * REFUND_ALERT_AFTER_MS (2 s here), which is what the waits below wait for.
 */
// The breaker never opens here (attention-breaker.e2e-spec.ts has one that does).
const h = useHarness({ CONFIRM_RETRY_BASE_MS: '600000', REFUND_ALERT_AFTER_MS: '2000', BREAKER_VOLUME_THRESHOLD: '100000' });
const sku = uniqueSku('ALARM');

const { order, view, eventTypes, expectNoAlarm } = attentionProbe(h, sku);

/** An order whose charge left with an unknown outcome, then canceled: it may owe, so its watch runs. */
async function mayOwe(): Promise<string> {
  const id = await order();
  await h.sim.script(['error']);
  expect((await h.api.post(`/orders/${id}/confirm`)).status).toBe(202);
  expect((await h.api.post(`/orders/${id}/cancel`)).body).toMatchObject({ status: 'CANCELED' });
  expect(await view(id)).toMatchObject({ refundStatus: 'PENDING' });
  return id;
}

beforeAll(async () => {
  expect((await h.api.putSku(sku, 1000)).status).toBe(200);
});

afterEach(async () => {
  await h.sim.setFaults({ down: false, lookupDown: false, refundDown: false, script: [] });
});

it('a declined order and one refused on its only request: no refund watch, no alarm while the gateway is away', async () => {
  const declined = await order();
  await h.sim.script(['decline']);
  expect((await h.api.post(`/orders/${declined}/confirm`)).body).toMatchObject({ status: 'PAY_FAILED' });
  const refused = await order();
  await h.sim.script(['refuse_422']);
  expect((await h.api.post(`/orders/${refused}/confirm`)).body).toMatchObject({ status: 'PAY_FAILED' });
  const control = await mayOwe();

  await h.sim.setFaults({ down: true, lookupDown: true, refundDown: true });
  // Long enough: the order that may owe is flagged (REFUND_ALERT_AFTER_MS has passed, its rounds failing).
  await waitFor('the order that may owe to need attention', async () => (await view(control)).needsAttention === true, 30_000, 250);
  expect(await view(control)).toMatchObject({ refundStatus: 'NEEDS_ATTENTION' });
  await expectNoAlarm(declined, 'PAY_FAILED');
  await expectNoAlarm(refused, 'PAY_FAILED');
}, 60_000);

it('a refusal after an attempt whose outcome is unknown may owe: it is watched (and flagged while the gateway stays away)', async () => {
  const id = await order();
  await h.sim.script(['error']);
  expect((await h.api.post(`/orders/${id}/confirm`)).status).toBe(202);
  expect(await eventTypes(id)).toContain('payment.charge'); // it left
  // The next attempt, now: a final refusal. The first may still have charged.
  await h.db.query(`UPDATE orders SET next_action_at = now() WHERE id = $1`, [id]);
  await h.sim.script(['refuse_422']);
  expect((await h.api.post(`/orders/${id}/confirm`)).body).toMatchObject({ status: 'PAY_FAILED' });
  expect(await view(id)).toMatchObject({ refundStatus: 'PENDING' });
  await h.sim.setFaults({ down: true, lookupDown: true, refundDown: true });
  await waitFor('the refusal after an unknown outcome to need attention', async () => (await view(id)).needsAttention === true, 30_000, 250);
}, 60_000);

it('held payments that ended without taking anything — a capture refused as the authorization expired, a hold voided on Cancel — are not watched on: no alarm while the gateway is away', async () => {
  const held = async () => {
    const res = await h.api.order(randomUUID(), { customerId: 'c-alarm', items: [{ sku, quantity: 1 }], payment: { paymentToken: 'tok_ok' } });
    expect(res.body).toMatchObject({ status: 'TRY_SUCCESS', payment: { status: 'authorized' } });
    return res.body.id as string;
  };
  const expired = await held();
  await h.sim.script(['expired'], 'captureScript');
  const confirm = await h.api.post(`/orders/${expired}/confirm`);
  expect(confirm.status).toBe(402);
  expect(confirm.body).toMatchObject({ status: 'PAY_FAILED', payment: { status: 'expired' } });
  expect(await view(expired)).toMatchObject({ refundStatus: null }); // nothing to watch for
  const voided = await held();
  expect((await h.api.post(`/orders/${voided}/cancel`)).body).toMatchObject({ status: 'CANCELED' });
  await waitFor('the void, and the watch to end with it', async () => {
    const v = await view(voided);
    return v.payment?.status === 'voided' && v.refundStatus === 'DONE';
  });
  const control = await mayOwe();

  await h.sim.setFaults({ down: true, lookupDown: true, refundDown: true });
  await waitFor('the order that may owe to need attention', async () => (await view(control)).needsAttention === true, 30_000, 250);
  await expectNoAlarm(expired, 'PAY_FAILED');
  expect(await view(voided)).toMatchObject({ status: 'CANCELED', refundStatus: 'DONE', needsAttention: false, payment: { status: 'voided' } });
  expect((await eventTypes(voided)).filter((t) => t === 'refund.failed' || t === 'attention.needed')).toEqual([]);
}, 60_000);
