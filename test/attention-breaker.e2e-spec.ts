import { attentionProbe } from './support/attention.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * A charge the open breaker kept from ever leaving cannot have charged: its order, canceled or
 * expired, gets no refund watch and never needs attention, however long the gateway stays away
 * (API.md, "Admin API"); the order whose failed charge opened the breaker did leave, so it is
 * watched and flagged after REFUND_ALERT_AFTER_MS (2 s here).
 *
 * A file of its own: the breaker here opens on the first failed gateway call of any kind, so the
 * opener's charge must be the first call after the gateway goes down. A database that holds other
 * watched orders (attention-false-alarms.e2e-spec.ts leaves some, their refund rounds looking the
 * gateway up) would let one of those lookups open the breaker first.
 */
const h = useHarness({
  CONFIRM_RETRY_BASE_MS: '600000',
  REFUND_ALERT_AFTER_MS: '2000',
  // Opens on the first failure and stays open.
  BREAKER_VOLUME_THRESHOLD: '1',
  BREAKER_ERROR_THRESHOLD_PERCENT: '1',
  BREAKER_RESET_TIMEOUT_MS: '600000',
});
const sku = uniqueSku('ALARM');
const { order, view, eventTypes, expectNoAlarm } = attentionProbe(h, sku);

beforeAll(async () => {
  expect((await h.api.putSku(sku, 1000)).status).toBe(200);
});

it('an order whose charge the open breaker never let leave: canceled or expired, no refund watch, no alarm', async () => {
  const [opener, neverSent, expires] = [await order(), await order(), await order()];
  await h.sim.setFaults({ down: true, lookupDown: true, refundDown: true });
  expect((await h.api.post(`/orders/${opener}/confirm`)).status).toBe(202); // sent: a 503, outcome unknown; the breaker opens
  expect(await eventTypes(opener)).toContain('payment.charge');
  expect((await h.api.admin('GET', '/admin/stats')).body.breaker).toBe('open');
  expect((await h.api.post(`/orders/${neverSent}/confirm`)).status).toBe(202);
  expect(await eventTypes(neverSent)).toContain('payment.breaker_rejected');
  expect((await h.api.post(`/orders/${expires}/confirm`)).status).toBe(202);
  expect(await eventTypes(expires)).toContain('payment.breaker_rejected');
  expect((await h.api.post(`/orders/${neverSent}/cancel`)).body).toMatchObject({ status: 'CANCELED' });
  expect((await h.api.post(`/orders/${opener}/cancel`)).body).toMatchObject({ status: 'CANCELED' });
  // The third one's reservation runs out while the gateway is away.
  await h.db.query(`UPDATE orders SET reservation_expires_at = now(), next_action_at = now() WHERE id = $1`, [expires]);
  await waitFor('the expiry', async () => (await view(expires)).status === 'CANCELED', 30_000, 250);

  await waitFor('the order whose charge left to need attention', async () => (await view(opener)).needsAttention === true, 30_000, 250);
  await expectNoAlarm(neverSent, 'CANCELED');
  await expectNoAlarm(expires, 'CANCELED');
}, 90_000);
