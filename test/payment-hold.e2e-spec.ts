import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { HANG_ENV } from './support/service.js';
import { waitFor } from './support/http.js';
import { moneyBroken, reserveHeld, tryHeld } from './support/holds.js';
import { reserve, uniqueSku, waitForStatus } from './support/orders.js';

/**
 * Payment held at Try (API.md): the amount authorized with the reservation, captured at Confirm,
 * voided at Cancel — beside the classic flow (charge at Confirm), chosen per order by whether the
 * Try carries `payment`. Retries never run by themselves here (a 10-minute backoff).
 */
const h = useHarness({ ...HANG_ENV, CONFIRM_RETRY_BASE_MS: '600000', RESERVATION_TTL_MS: '600000', RESERVATION_MAX_TTL_MS: '3600000' });

beforeEach(() => h.sim.reset());

const stock = async (s: string) => (await h.api.get(`/inventory/${s}`)).body;
const events = async (id: string): Promise<{ type: string; data: any }[]> => (await h.api.admin('GET', `/admin/orders/${id}/events`)).body.data;
const row = async (id: string) => (await h.db.query(`SELECT payment_key, payment_token, payment_requested_at, authorize_attempts FROM orders WHERE id = $1`, [id]))[0];

afterEach(async () => {
  expect(await h.db.query(`SELECT sku FROM stock WHERE reserved < 0 OR reserved > on_hand`)).toEqual([]);
});

describe('Try with payment', () => {
  it('authorized: 201 TRY_SUCCESS, payment authorized with the gateway’s expiry, the key derived from the order, stock held', async () => {
    const s = uniqueSku('AUTH');
    const order = await reserveHeld(h.api, s, 2, 10, 1250);
    expect(order).toMatchObject({ status: 'TRY_SUCCESS', amountMinor: 2500, paymentId: expect.stringMatching(/^pay_/) });
    expect(order.payment).toEqual({ status: 'authorized', paymentId: order.paymentId, authorizedMinor: 2500, capturedMinor: 0, authorizationExpiresAt: expect.any(String) });
    const ledger = await h.sim.ledger();
    expect(ledger.authorizeAttempts).toEqual([{ reference: order.id, paymentToken: 'tok_ok' }]);
    expect(ledger.payments).toEqual([expect.objectContaining({ id: order.paymentId, status: 'authorized', amountMinor: 2500, authorizationExpiresAt: order.payment.authorizationExpiresAt })]);
    expect(await row(order.id)).toMatchObject({ payment_key: `authorize-${order.id}`, authorize_attempts: 0 });
    expect(await stock(s)).toMatchObject({ reserved: 2, onHand: 10 });
    expect((await events(order.id)).map((e) => e.type)).toEqual(['status.changed', 'payment.authorize', 'payment.changed']);
  });

  it('declined: 402 + order PAY_FAILED, stock released in the same request; a replay of the key answers the same 402 and reserves nothing', async () => {
    const s = uniqueSku('DECL');
    await h.api.putSku(s, 5);
    const key = randomUUID();
    const res = await tryHeld(h.api, s, 3, 'tok_decline', key);
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ status: 'PAY_FAILED', failureReason: 'payment declined', payment: { status: 'declined', capturedMinor: 0 } });
    expect(await stock(s)).toMatchObject({ reserved: 0, available: 5 });
    const again = await tryHeld(h.api, s, 3, 'tok_decline', key);
    expect(again.status).toBe(402);
    expect(again.body.id).toBe(res.body.id);
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    expect((await h.sim.ledger()).authorizeAttempts).toHaveLength(1);
    expect(await row(res.body.id)).toMatchObject({ payment_token: null });
  });

  it.each([400, 401, 403, 404, 422])('a final refusal (%i) of the authorization: 402 PAY_FAILED naming the status, stock released', async (status) => {
    const s = uniqueSku(`REF${status}`);
    await h.api.putSku(s, 5);
    await h.sim.script([`refuse_${status}` as never]);
    const res = await tryHeld(h.api, s, 1);
    expect(res.status).toBe(402);
    expect(res.body.failureReason).toMatch(new RegExp(`\\b${status}\\b`));
    expect(res.body.payment.status).toBe('declined');
    expect(await stock(s)).toMatchObject({ reserved: 0 });
  });

  it('a replay while the first Try’s authorization is in flight waits for it and answers the same order', async () => {
    const s = uniqueSku('INFL');
    await h.api.putSku(s, 5);
    // The gateway answers after 200 ms (PAYMENT_TIMEOUT_MS is 1 s).
    await h.sim.setFaults({ hangMs: 200, script: ['slow_ok'] });
    const key = randomUUID();
    const first = tryHeld(h.api, s, 1, 'tok_ok', key);
    await waitFor('the authorization to reach the gateway', async () => (await h.sim.ledger()).authorizeAttempts.length === 1, 5000, 20);
    const replay = await tryHeld(h.api, s, 1, 'tok_ok', key);
    const done = await first;
    expect(done.status).toBe(201);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ id: done.body.id, payment: { status: 'authorized' } });
    expect(await stock(s)).toMatchObject({ reserved: 1 });
  });

  it('another token with the same key is a reuse (422), nothing reserved', async () => {
    const s = uniqueSku('REUSE');
    await h.api.putSku(s, 5);
    const key = randomUUID();
    expect((await tryHeld(h.api, s, 1, 'tok_a', key)).status).toBe(201);
    const other = await tryHeld(h.api, s, 1, 'tok_b', key);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await stock(s)).toMatchObject({ reserved: 1 });
  });

  it.each([
    [{ payment: {} }, 'payment.paymentToken'],
    [{ payment: { paymentToken: '' } }, 'payment.paymentToken'],
    [{ payment: { paymentToken: 'x'.repeat(256) } }, 'payment.paymentToken'],
    [{ payment: { paymentToken: 'tok', extra: 1 } }, 'payment'],
    [{ payment: 'tok' }, 'payment'],
  ])('bad payment %j: 400 VALIDATION_FAILED, nothing reserved', async (extra, field) => {
    const s = uniqueSku('BAD');
    await h.api.putSku(s, 5);
    const res = await h.api.order(randomUUID(), { customerId: 'c', items: [{ sku: s, quantity: 1 }], ...extra });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field).join(' ')).toContain(field);
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    expect((await h.sim.ledger()).chargeRequests).toBe(0);
  });
});

describe('Confirm captures, Cancel voids', () => {
  it('Confirm of an authorized order: 200 CONFIRM_SUCCESS, payment captured, one capture of the amount, nothing held; the token sent is ignored', async () => {
    const s = uniqueSku('CAP');
    const order = await reserveHeld(h.api, s, 2);
    const res = await h.api.post(`/orders/${order.id}/confirm`, { paymentToken: 'tok_decline' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CONFIRM_SUCCESS', confirmAttempts: 1, payment: { status: 'captured', capturedMinor: 2000, authorizedMinor: 2000 } });
    expect(await moneyBroken(h.sim, res.body)).toEqual([]);
    expect((await h.sim.ledger()).captures).toEqual([{ paymentId: order.paymentId, amountMinor: 2000 }]);
    expect(await stock(s)).toMatchObject({ onHand: 8, reserved: 0 });
    expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(200);
    expect((await h.sim.ledger()).captureRequests).toBe(1);
    const types = (await events(order.id)).map((e) => e.type);
    expect(types).toContain('payment.capture');
    expect(await row(order.id)).toMatchObject({ payment_token: null });
  });

  it('Cancel of an authorized order: stock released at once, the hold voided (voiding, then voided)', async () => {
    const s = uniqueSku('VOID');
    const order = await reserveHeld(h.api, s, 3);
    const res = await h.api.post(`/orders/${order.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CANCELED', payment: { status: 'voiding' } });
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    const done = await waitFor('the void', async () => {
      const o = (await h.api.get(`/orders/${order.id}`)).body;
      return o.payment.status === 'voided' && o;
    });
    expect(await moneyBroken(h.sim, done)).toEqual([]);
    expect((await h.sim.ledger()).voids).toEqual([{ paymentId: order.paymentId }]);
    const types = (await events(order.id)).map((e) => e.type);
    expect(types).toContain('payment.void');
  });

  it('force-cancel voids too; force-confirm captures like Confirm', async () => {
    const a = await reserveHeld(h.api, uniqueSku('FC'), 1);
    expect((await h.api.admin('POST', `/admin/orders/${a.id}/force-cancel`, { reason: 'fraud' })).body).toMatchObject({ status: 'CANCELED' });
    await waitFor('the void', async () => (await h.api.get(`/orders/${a.id}`)).body.payment.status === 'voided');
    expect(await moneyBroken(h.sim, { ...a, status: 'CANCELED' })).toEqual([]);

    const b = await reserveHeld(h.api, uniqueSku('FK'), 1);
    const forced = await h.api.admin('POST', `/admin/orders/${b.id}/force-confirm`, { reason: 'customer on the phone' });
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured', capturedMinor: 1000 } });
    expect(await moneyBroken(h.sim, forced.body)).toEqual([]);
    const [{ force_confirmed }] = await h.db.query(`SELECT force_confirmed FROM orders WHERE id = $1`, [b.id]);
    expect(force_confirmed).toBe(false);
    expect((await events(b.id)).filter((e) => e.type === 'operator.force_confirm')).toEqual([expect.objectContaining({ data: expect.objectContaining({ reason: 'customer on the phone', capture: true }) })]);
  });

  it('Confirm past the TTL while the authorization’s step is in flight: answered as it stands (202), not taken, nothing announced; the expiry then releases it and voids the hold', async () => {
    const o = await reserveHeld(h.api, uniqueSku('LATEAUTH'), 1);
    // An authorization whose outcome is still being settled (its step holds the lease), the TTL just passed.
    await h.db.query(
      `UPDATE orders SET payment_status = 'authorizing', lease_until = now() + interval '3 seconds', reservation_expires_at = now() - interval '1 second' WHERE id = $1`,
      [o.id],
    );
    const res = await h.api.post(`/orders/${o.id}/confirm`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'TRY_SUCCESS', payment: { status: 'authorizing' } });
    expect((await events(o.id)).filter((e) => e.type === 'status.changed' && e.data.to === 'CONFIRM_PENDING')).toEqual([]);
    const [{ status }] = await h.db.query<{ status: string }>(`SELECT status FROM orders WHERE id = $1`, [o.id]);
    expect(status).toBe('TRY_SUCCESS');
    // The step's lease ends: the expiry releases the order and the money-back round voids the hold.
    await h.db.query(`UPDATE orders SET lease_until = NULL WHERE id = $1`, [o.id]);
    const done = await waitForStatus(h.api, o.id, ['CANCELED']);
    expect(done.status).toBe('CANCELED');
    await waitFor('the hold voided', async () => (await h.sim.ledger()).payments.find((p) => p.reference === o.id)?.status === 'voided');
  });

  /** A Confirm sent, then a force-confirm within 20 ms of its step's lease (well inside IDEMPOTENCY_WAIT_MS). */
  async function forceConfirmMidStep(id: string) {
    const confirming = h.api.post(`/orders/${id}/confirm`);
    await waitFor('the step in flight', async () => (await h.db.query(`SELECT 1 FROM orders WHERE id = $1 AND lease_until > now()`, [id])).length === 1, 5_000, 20);
    const forced = await h.api.admin('POST', `/admin/orders/${id}/force-confirm`, { reason: 'customer on the phone' });
    return { confirming, forced };
  }

  it('force-confirm while a Confirm’s capture is in flight awaits it and answers its outcome, one capture in all', async () => {
    const o = await reserveHeld(h.api, uniqueSku('FKF'), 1);
    await h.sim.setFaults({ hangMs: 600, captureScript: ['slow_ok'] });
    const { confirming, forced } = await forceConfirmMidStep(o.id);
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured', capturedMinor: 1000 } });
    expect((await confirming).body).toMatchObject({ status: 'CONFIRM_SUCCESS' });
    expect(await moneyBroken(h.sim, forced.body)).toEqual([]);
  });

  it('force-confirm while a classic order’s charge is in flight awaits it: paid through the gateway, not forced besides', async () => {
    const o = await reserve(h.api, uniqueSku('FKC'), 1);
    await h.sim.setFaults({ hangMs: 600, script: ['slow_ok'] });
    const { confirming, forced } = await forceConfirmMidStep(o.id);
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ status: 'CONFIRM_SUCCESS', needsAttention: false });
    expect((await confirming).body).toMatchObject({ status: 'CONFIRM_SUCCESS' });
    const [{ force_confirmed }] = await h.db.query(`SELECT force_confirmed FROM orders WHERE id = $1`, [o.id]);
    expect(force_confirmed).toBe(false);
    expect(await h.sim.chargesFor(o.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 1000 });
  });
});

describe('both flows side by side', () => {
  it('a classic order keeps payment null and is charged at Confirm; a held one is authorized and captured; each once', async () => {
    const s = uniqueSku('SIDE');
    await h.api.putSku(s, 10);
    const classic = await reserve(h.api, s, 1);
    const held = (await tryHeld(h.api, s, 2)).body;
    expect(classic.payment).toBeNull();
    expect(held.payment.status).toBe('authorized');
    const [c, d] = await Promise.all([h.api.post(`/orders/${classic.id}/confirm`), h.api.post(`/orders/${held.id}/confirm`)]);
    expect([c.status, d.status]).toEqual([200, 200]);
    expect(c.body.payment).toBeNull();
    expect(await h.sim.chargesFor(classic.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 1000 });
    expect(await moneyBroken(h.sim, d.body)).toEqual([]);
    const ledger = await h.sim.ledger();
    expect(ledger.chargeAttempts.map((a) => a.reference)).toEqual([classic.id]);
    expect(ledger.authorizeAttempts.map((a) => a.reference)).toEqual([held.id]);
    expect(await stock(s)).toMatchObject({ onHand: 7, reserved: 0 });
  });
});

describe('the reservation never outlives the authorization', () => {
  it('reservationExpiresAt ≤ authorizationExpiresAt − AUTHORIZATION_MARGIN_MS; extend stops there with EXTENSION_LIMIT_REACHED', async () => {
    // Authorizations last 15 min here, the margin is 10 min (default): the reservation ends 5 min after the Try at most
    // (RESERVATION_TTL_MS is 10 min).
    await h.sim.setFaults({ authTtlMs: 15 * 60_000 });
    const order = await reserveHeld(h.api, uniqueSku('CAPTTL'), 1);
    const cap = Date.parse(order.payment.authorizationExpiresAt) - 600_000;
    expect(Date.parse(order.reservationExpiresAt)).toBeLessThanOrEqual(cap);
    expect(Date.parse(order.reservationExpiresAt)).toBe(cap);
    const ext = await h.api.post(`/orders/${order.id}/extend`, { extendByMs: 3_600_000 });
    expect(ext.status).toBe(409);
    expect(ext.body.code).toBe('EXTENSION_LIMIT_REACHED');
    // With a longer authorization the cap is RESERVATION_MAX_TTL_MS as before.
    await h.sim.setFaults({ authTtlMs: 7 * 24 * 3600_000 });
    const later = await reserveHeld(h.api, uniqueSku('LONG'), 1);
    expect(Date.parse(later.reservationExpiresAt) - Date.parse(later.createdAt)).toBe(600_000);
    const extended = await h.api.post(`/orders/${later.id}/extend`, { extendByMs: 1_200_000 });
    expect(extended.status).toBe(200);
    expect(Date.parse(extended.body.reservationExpiresAt)).toBeGreaterThan(Date.parse(later.reservationExpiresAt));
  });
});

describe('edges', () => {
  it('a total of 0 holds nothing: authorized at once without a gateway call, captured (0) at Confirm, voided on release', async () => {
    await h.sim.setFaults({ down: true });
    const s = uniqueSku('ZERO');
    await h.api.putSku(s, 5, 0);
    const a = await tryHeld(h.api, s, 1);
    expect(a.status).toBe(201);
    expect(a.body.payment).toEqual({ status: 'authorized', paymentId: null, authorizedMinor: 0, capturedMinor: 0, authorizationExpiresAt: null });
    const confirmed = await h.api.post(`/orders/${a.body.id}/confirm`);
    expect(confirmed.body).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured', capturedMinor: 0 } });
    const b = await tryHeld(h.api, s, 1);
    const canceled = await h.api.post(`/orders/${b.body.id}/cancel`);
    expect(canceled.body).toMatchObject({ status: 'CANCELED', payment: { status: 'voided' } });
    expect((await h.api.admin('GET', `/admin/orders/${b.body.id}`)).body.refundStatus).toBeNull();
    expect((await h.sim.ledger()).chargeRequests).toBe(0);
    expect(await stock(s)).toMatchObject({ onHand: 4, reserved: 0 });
  });

  it('retry-now on a Confirm waiting for its authorization runs the authorization, then the capture', async () => {
    await h.restart({ CONFIRM_RETRY_BASE_MS: '600000', RESERVATION_TTL_MS: '600000', RESERVATION_MAX_TTL_MS: '3600000' });
    try {
      const s = uniqueSku('RETRYNOW');
      await h.api.putSku(s, 5);
      await h.sim.script(['error']);
      const order = (await tryHeld(h.api, s, 1)).body;
      expect((await h.api.post(`/orders/${order.id}/confirm`)).body).toMatchObject({ status: 'CONFIRM_PENDING', payment: { status: 'authorizing' } });
      const res = await h.api.admin('POST', `/admin/orders/${order.id}/retry-now`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured' } });
      expect(await moneyBroken(h.sim, res.body)).toEqual([]);
    } finally {
      await h.restart();
    }
  });
});
