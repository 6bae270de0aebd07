import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { waitForStatus } from './support/orders.js';

/** POST /orders/{id}/extend: a slow payment page keeps its reservation, up to RESERVATION_MAX_TTL_MS from creation. */
const h = useHarness({ RESERVATION_TTL_MS: '2000', RESERVATION_MAX_TTL_MS: '8000', PARTICIPANT_TTL_MS: '8000', SWEEP_INTERVAL_MS: '200', CONFIRM_RETRY_BASE_MS: '600000' });

async function order(quantity = 1): Promise<any> {
  const sku = `EXT-${randomUUID().slice(0, 8)}`;
  await h.api.putSku(sku, 10);
  const res = await h.api.order(randomUUID(), { customerId: 'c-ext', items: [{ sku, quantity }] });
  expect(res.status).toBe(201);
  return { ...res.body, sku };
}
const extend = (id: string, body: unknown) => h.api.post(`/orders/${id}/extend`, body);

it('moves the expiry to now + extendByMs, keeps it when that is not later, and caps it at createdAt + RESERVATION_MAX_TTL_MS', async () => {
  const o = await order();
  const before = Date.parse(o.reservationExpiresAt);
  const a = await extend(o.id, { extendByMs: 4000 });
  expect(a.status).toBe(200);
  expect(a.body.status).toBe('TRY_SUCCESS');
  const after = Date.parse(a.body.reservationExpiresAt);
  expect(after).toBeGreaterThan(before);
  expect(after - Date.now()).toBeGreaterThan(3000);
  expect(after - Date.now()).toBeLessThanOrEqual(4100);
  const same = await extend(o.id, { extendByMs: 1000 });
  expect(same.status).toBe(200);
  expect(same.body.reservationExpiresAt).toBe(a.body.reservationExpiresAt);
  const capped = await extend(o.id, { extendByMs: 3_600_000 });
  expect(capped.status).toBe(200);
  expect(Date.parse(capped.body.reservationExpiresAt)).toBe(Date.parse(o.createdAt) + 8000);
  const limit = await extend(o.id, { extendByMs: 1000 });
  expect([limit.status, limit.body.code]).toEqual([409, 'EXTENSION_LIMIT_REACHED']);
  const events = (await h.api.admin('GET', `/admin/orders/${o.id}/events`)).body.data.filter((e: any) => e.type === 'reservation.extended');
  expect(events).toHaveLength(2);
});

it('the expiry follows the new deadline: not released at the old one, released at the new one', async () => {
  const o = await order(3);
  expect((await extend(o.id, { extendByMs: 4500 })).status).toBe(200);
  await new Promise((r) => setTimeout(r, 3000)); // past the original 2 s TTL
  expect((await h.api.get(`/orders/${o.id}`)).body.status).toBe('TRY_SUCCESS');
  expect((await h.api.get(`/inventory/${o.sku}`)).body.reserved).toBe(3);
  const done = await waitForStatus(h.api, o.id, ['CANCELED'], 10_000);
  expect(done.failureReason).toMatch(/expired/);
  expect((await h.api.get(`/inventory/${o.sku}`)).body.reserved).toBe(0);
});

it('refuses finished orders and orders past their TTL, and bad input, changing nothing', async () => {
  const paid = await order();
  expect((await h.api.post(`/orders/${paid.id}/confirm`)).status).toBe(200);
  expect((await extend(paid.id, { extendByMs: 5000 })).body.code).toBe('ORDER_CONFIRMED');
  const canceled = await order();
  await h.api.post(`/orders/${canceled.id}/cancel`);
  expect((await extend(canceled.id, { extendByMs: 5000 })).body.code).toBe('ORDER_CANCELED');
  const late = await order();
  await h.db.query(`UPDATE orders SET reservation_expires_at = now() - interval '1 second' WHERE id = $1`, [late.id]);
  expect((await extend(late.id, { extendByMs: 5000 })).body.code).toBe('ORDER_CANCELED');
  expect((await extend(randomUUID(), { extendByMs: 5000 })).status).toBe(404);
  expect((await extend('not-an-id', { extendByMs: 5000 })).status).toBe(404);
  const o = await order();
  for (const body of [{}, { extendByMs: 999 }, { extendByMs: 3_600_001 }, { extendByMs: '2000' }, { extendByMs: 1500.5 }, { extendByMs: 2000, x: 1 }]) {
    const res = await extend(o.id, body);
    expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  }
  expect((await h.api.get(`/orders/${o.id}`)).body.reservationExpiresAt).toBe(o.reservationExpiresAt);
});
