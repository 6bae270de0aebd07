import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { HANG_ENV } from './support/service.js';
import { waitFor } from './support/http.js';
import { moneyBroken, reserveHeld, tryHeld } from './support/holds.js';
import { TERMINAL, uniqueSku, waitForStatus } from './support/orders.js';
import type { SimMode } from './support/simulator.js';

/**
 * Payment held at Try under a faulty gateway: each fault at the authorization and at the capture
 * (timeouts, 5xx, 429, a call made whose answer is lost, final refusals, an expired hold), settled
 * in the background by retries with the same key and then a lookup — and the money invariant at the
 * simulator once each order has settled. PAYMENT_TIMEOUT_MS is 1 s (HANG_ENV), retries start at 100 ms.
 */
const h = useHarness({ ...HANG_ENV, CONFIRM_MAX_ATTEMPTS: '3', BREAKER_VOLUME_THRESHOLD: '1000', RESERVATION_TTL_MS: '60000' });

beforeEach(() => h.sim.reset());

const stock = async (s: string) => (await h.api.get(`/inventory/${s}`)).body;
const get = async (id: string) => (await h.api.get(`/orders/${id}`)).body;
const types = async (id: string): Promise<string[]> => (await h.api.admin('GET', `/admin/orders/${id}/events`)).body.data.map((e: { type: string }) => e.type);
/** Waits until the order and its payment have both settled: a terminal status and nothing pending at the gateway. */
const settled = (id: string, payment: string[], status = TERMINAL) =>
  waitFor(`order ${id} to settle`, async () => {
    const o = await get(id);
    return status.includes(o.status) && payment.includes(o.payment?.status) && o;
  });

afterEach(async () => {
  expect(await h.db.query(`SELECT sku FROM stock WHERE reserved < 0 OR reserved > on_hand`)).toEqual([]);
});

/** A Try holding 1 of a fresh SKU (5 in stock) against a gateway scripted so: answered 201 `authorizing`, then the order once it ended, and its SKU. */
async function endedAfter(prefix: string, script: SimMode[]) {
  const s = uniqueSku(prefix);
  await h.api.putSku(s, 5);
  await h.sim.script(script);
  const res = await tryHeld(h.api, s, 1);
  expect(res.body.payment.status).toBe('authorizing');
  return { s, done: await waitForStatus(h.api, res.body.id, TERMINAL) };
}

describe('faults at the authorization (Try)', () => {
  it.each([
    ['hang', 'timeout'],
    ['error', '5xx'],
    ['rate_limit', '429'],
    ['authorize_then_hang', 'authorized, then the answer hangs'],
    ['authorize_then_error', 'authorized, then a 5xx'],
  ] as const)('%s (%s): 201 TRY_SUCCESS authorizing, stock held; settled in the background with the same key: authorized, one authorization', async (...[mode]) => {
    const s = uniqueSku('AUNK');
    await h.api.putSku(s, 5);
    await h.sim.setFaults({ hangMs: 5000, script: [mode as SimMode] });
    const res = await tryHeld(h.api, s, 2);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'TRY_SUCCESS', payment: { status: 'authorizing', paymentId: null } });
    expect(await stock(s)).toMatchObject({ reserved: 2 });
    const done = await waitFor('the authorization to settle', async () => (await get(res.body.id)).payment.status === 'authorized');
    expect(done).toBe(true);
    const o = await get(res.body.id);
    expect(o).toMatchObject({ status: 'TRY_SUCCESS', payment: { authorizedMinor: 2000 } });
    expect(await h.sim.holdsFor(o.id)).toEqual({ authorizations: 1, open: 1, captures: 0, netCapturedMinor: 0 });
    const keys = new Set((await h.sim.ledger()).authorizeAttempts.filter((a) => a.reference === o.id).map((a) => a.paymentToken));
    expect(keys).toEqual(new Set(['tok_ok']));
    expect(await types(o.id)).toContain('authorization.retry_scheduled');
    // And it captures at Confirm as any other.
    const confirmed = await h.api.post(`/orders/${o.id}/confirm`);
    expect(confirmed.status).toBe(200);
    expect(await moneyBroken(h.sim, confirmed.body)).toEqual([]);
  });

  it('unknown, then declined by the retry: PAY_FAILED, stock released', async () => {
    const { s, done } = await endedAfter('ADECL', ['error', 'decline']);
    expect(done).toMatchObject({ status: 'PAY_FAILED', failureReason: 'payment declined', payment: { status: 'declined' } });
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    expect(await moneyBroken(h.sim, done)).toEqual([]);
  });

  it('authorized but its answer lost, then the retry refused 401 (before the gateway replays the key): PAY_FAILED, stock released, and the hold voided', async () => {
    const { s, done } = await endedAfter('AREFU', ['authorize_then_error', 'refuse_401']);
    expect(done).toMatchObject({ status: 'PAY_FAILED' });
    expect(done.failureReason).toMatch(/refused by the gateway \(HTTP 401\)/);
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    // A refusal says nothing of the attempt before it, whose outcome was unknown: the release
    // watches, finds the hold that attempt made, and voids it.
    // The gateway's record first, then the order's: the service writes the void's answer after it comes.
    const voided = await waitFor('the hold to be voided, and the order to say so', async () => {
      if ((await h.sim.holdsFor(done.id)).open !== 0) return undefined;
      const o = await get(done.id);
      return o.payment?.status === 'voiding' ? undefined : o;
    });
    expect(voided).toMatchObject({ status: 'PAY_FAILED', payment: { status: 'voided' } });
    expect(await h.sim.holdsFor(done.id)).toMatchObject({ authorizations: 1, open: 0, captures: 0, netCapturedMinor: 0 });
    expect(await moneyBroken(h.sim, voided)).toEqual([]);
  });

  it('every attempt unknown and the gateway holds nothing: PAY_FAILED after the lookup, stock released', async () => {
    const { s, done } = await endedAfter('AEXH', ['error', 'error', 'error', 'error']);
    expect(done).toMatchObject({ status: 'PAY_FAILED', payment: { status: 'declined' } });
    expect(done.failureReason).toMatch(/3 authorization attempts with unknown outcome; the gateway has no authorization/);
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    expect((await types(done.id)).filter((t) => t === 'payment.lookup').length).toBeGreaterThanOrEqual(1);
  });

  it('the attempts used up while the gateway holds the authorization: the lookup finds it, authorized', async () => {
    // Retries 10 minutes apart: with the suite's 100 ms, the second attempt could repeat the
    // recorded authorization (and settle it, no lookup) before the order is made to look used up.
    await h.restart({ CONFIRM_RETRY_BASE_MS: '600000' });
    try {
      const s = uniqueSku('AFOUND');
      await h.api.putSku(s, 5);
      await h.sim.setFaults({ script: ['authorize_then_error'] });
      // The next attempt is 10 minutes out; the order is made to look as if its attempts were all used up.
      const res = await tryHeld(h.api, s, 1);
      await h.db.query(`UPDATE orders SET authorize_attempts = 3, next_action_at = now() WHERE id = $1`, [res.body.id]);
      await waitFor('the lookup to settle it', async () => (await get(res.body.id)).payment.status === 'authorized');
      expect(await types(res.body.id)).toContain('payment.lookup');
      expect((await h.sim.ledger()).authorizeAttempts).toHaveLength(1);
    } finally {
      await h.restart();
    }
  });

  it('Confirm while the authorization settles: 202 CONFIRM_PENDING, then captured by itself once authorized (the token sent ignored)', async () => {
    const s = uniqueSku('AWAIT');
    await h.api.putSku(s, 5);
    await h.sim.setFaults({ script: ['error'] });
    const res = await tryHeld(h.api, s, 1);
    expect(res.body.payment.status).toBe('authorizing');
    const confirm = await h.api.post(`/orders/${res.body.id}/confirm`, { paymentToken: 'tok_decline' });
    expect([202, 200]).toContain(confirm.status);
    if (confirm.status === 202) expect(confirm.body.status).toBe('CONFIRM_PENDING');
    const done = await waitForStatus(h.api, res.body.id, TERMINAL);
    expect(done).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured', capturedMinor: 1000 } });
    expect(await moneyBroken(h.sim, done)).toEqual([]);
    expect((await h.sim.ledger()).authorizeAttempts.map((a) => a.paymentToken)).toEqual(['tok_ok', 'tok_ok']);
  });

  it('the gateway down for good, lookups too: the order ends CANCELED at its TTL, stock released, nothing held', async () => {
    await h.restart({ RESERVATION_TTL_MS: '3000', CONFIRM_MAX_ATTEMPTS: '3', BREAKER_VOLUME_THRESHOLD: '1000', REFUND_WATCH_MS: '8000' });
    try {
      const s = uniqueSku('ADOWN');
      await h.api.putSku(s, 5);
      await h.sim.setFaults({ down: true });
      const res = await tryHeld(h.api, s, 1);
      expect(res.body.payment.status).toBe('authorizing');
      const done = await waitForStatus(h.api, res.body.id, TERMINAL);
      expect(done).toMatchObject({ status: 'CANCELED', payment: { status: 'authorizing' } });
      expect(await stock(s)).toMatchObject({ reserved: 0 });
      await h.sim.setFaults({ down: false });
      // Nothing turns up at the gateway during the watch (REFUND_WATCH_MS here; by default max(60 s,
      // 10 × PAYMENT_TIMEOUT_MS)): nothing is held.
      const after = await waitFor('the watch to end', async () => {
        const o = await get(done.id);
        return o.payment.status === 'voided' && o;
      }, 30_000, 250);
      expect(after.status).toBe('CANCELED');
      expect(await moneyBroken(h.sim, after)).toEqual([]);
    } finally {
      await h.restart();
    }
  }, 90_000);
});

describe('faults at the capture (Confirm)', () => {
  it.each([
    ['hang', 0],
    ['error', 0],
    ['rate_limit', 0],
    ['capture_then_hang', 1],
    ['capture_then_error', 1],
  ] as const)('%s: 202 CONFIRM_PENDING, retried with the same key: CONFIRM_SUCCESS, exactly one capture, nothing held (%i made before the answer was lost)', async (...[mode]) => {
    const s = uniqueSku('CUNK');
    const order = await reserveHeld(h.api, s, 2);
    await h.sim.setFaults({ hangMs: 5000 });
    await h.sim.script([mode as SimMode], 'captureScript');
    const res = await h.api.post(`/orders/${order.id}/confirm`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'CONFIRM_PENDING', payment: { status: 'capturing' } });
    const done = await waitForStatus(h.api, order.id, TERMINAL);
    expect(done).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured', capturedMinor: 2000 } });
    expect(await moneyBroken(h.sim, done)).toEqual([]);
    expect((await h.sim.ledger()).captures).toHaveLength(1);
    expect(await stock(s)).toMatchObject({ onHand: 8, reserved: 0 });
  });

  it('every capture attempt unknown and nothing captured: PAY_FAILED after the lookup, the hold voided', async () => {
    const s = uniqueSku('CEXH');
    const order = await reserveHeld(h.api, s, 1);
    await h.sim.script(['error', 'error', 'error', 'error'], 'captureScript');
    expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
    const done = await settled(order.id, ['voided']);
    expect(done.status).toBe('PAY_FAILED');
    expect(done.failureReason).toMatch(/the gateway has no capture/);
    expect(await moneyBroken(h.sim, done)).toEqual([]);
    expect(await stock(s)).toMatchObject({ onHand: 10, reserved: 0 });
  });

  it.each([
    ['expired', 'an authorization that expired'],
    ['refuse_422', 'a final refusal'],
  ] as const)('%s (%s): 402 PAY_FAILED at once, stock released, nothing held, nothing needs attention', async (...[mode]) => {
    const s = uniqueSku('CEND');
    const order = await reserveHeld(h.api, s, 1);
    await h.sim.script([mode as SimMode], 'captureScript');
    const res = await h.api.post(`/orders/${order.id}/confirm`);
    expect(res.status).toBe(402);
    expect(res.body.status).toBe('PAY_FAILED');
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    const done = await settled(order.id, ['expired', 'voided']);
    expect(done.payment.status).toBe(mode === 'expired' ? 'expired' : 'voided');
    expect(await moneyBroken(h.sim, done)).toEqual([]);
    const admin = (await h.api.admin('GET', `/admin/orders/${order.id}`)).body;
    expect(admin.needsAttention).toBe(false);
  });

  it('an authorization shorter than AUTHORIZATION_MARGIN_MS: the reservation ends at once (CANCELED by its TTL), the hold voided; Confirm answers 409', async () => {
    await h.sim.setFaults({ authTtlMs: 5000 });
    const s = uniqueSku('CTTL');
    const order = await reserveHeld(h.api, s, 1);
    expect(Date.parse(order.reservationExpiresAt)).toBeLessThanOrEqual(Date.parse(order.payment.authorizationExpiresAt) - 600_000);
    const done = await settled(order.id, ['voided', 'expired']);
    expect(done).toMatchObject({ status: 'CANCELED', failureReason: 'reservation expired' });
    expect(await stock(s)).toMatchObject({ reserved: 0 });
    expect(await moneyBroken(h.sim, done)).toEqual([]);
    const res = await h.api.post(`/orders/${order.id}/confirm`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('ORDER_CANCELED');
  });

  it('Confirms racing a capture in flight: one capture attempt, the others answer the order as it stands', async () => {
    const order = await reserveHeld(h.api, uniqueSku('CRACE'), 1);
    await h.sim.setFaults({ hangMs: 150 });
    await h.sim.script(['slow_ok'], 'captureScript');
    const answers = await Promise.all(Array.from({ length: 6 }, () => h.api.post(`/orders/${order.id}/confirm`)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.every((a) => a.status === 200 || a.status === 202)).toBe(true);
    const done = await waitForStatus(h.api, order.id, TERMINAL);
    expect(await moneyBroken(h.sim, done)).toEqual([]);
    expect((await h.sim.ledger()).captureRequests).toBe(1);
  });

  it('the reservation TTL while a capture’s outcome is unknown: the gateway is asked — captured → CONFIRM_SUCCESS', async () => {
    await h.restart({ RESERVATION_TTL_MS: '2500', CONFIRM_RETRY_BASE_MS: '600000', BREAKER_VOLUME_THRESHOLD: '1000' });
    try {
      const captured = await reserveHeld(h.api, uniqueSku('TTLC'), 1);
      await h.sim.script(['capture_then_error'], 'captureScript');
      expect((await h.api.post(`/orders/${captured.id}/confirm`)).status).toBe(202);
      const notCaptured = await reserveHeld(h.api, uniqueSku('TTLN'), 1);
      await h.sim.script(['error'], 'captureScript');
      expect((await h.api.post(`/orders/${notCaptured.id}/confirm`)).status).toBe(202);
      const a = await waitForStatus(h.api, captured.id, TERMINAL);
      expect(a).toMatchObject({ status: 'CONFIRM_SUCCESS', payment: { status: 'captured' } });
      const b = await settled(notCaptured.id, ['voided']);
      expect(b.status).toBe('CANCELED');
      expect(await moneyBroken(h.sim, a)).toEqual([]);
      expect(await moneyBroken(h.sim, b)).toEqual([]);
    } finally {
      await h.restart();
    }
  });
});

describe('a crash between the authorization and its record', () => {
  it('the Try\'s authorization held at the gateway but never recorded, its retry refused 401: PAY_FAILED, and the hold is still found and voided', async () => {
    const s = uniqueSku('AUTHCRASH');
    const order = await reserveHeld(h.api, s, 1, 5);
    const held = await settled(order.id, ['authorized'], ['TRY_SUCCESS']);
    expect((await h.sim.holdsFor(order.id)).open).toBe(1);
    // As a process killed after the gateway answered and before it applied the answer leaves it:
    // the order still authorizing, no attempt counted, its step due.
    await h.db.query(
      `UPDATE orders SET payment_status = 'authorizing', authorize_attempts = 0, payment_id = NULL, authorized_minor = NULL, authorization_expires_at = NULL,
                         lease_until = NULL, next_action_at = now() WHERE id = $1`,
      [held.id],
    );
    await h.sim.script(['refuse_401']);
    const done = await waitForStatus(h.api, order.id, TERMINAL);
    expect(done.status).toBe('PAY_FAILED');
    // The refusal was this request's, not the gateway's word on the order: the money-back round
    // looks, finds the authorization the first request made, and voids it.
    await waitFor('the hold to be voided', async () => (await moneyBroken(h.sim, await get(order.id))).length === 0, 20_000, 200);
    expect(await stock(s)).toMatchObject({ onHand: 5, reserved: 0 });
  });
});

describe('the breaker', () => {
  it('an open breaker defers the authorization and the capture (not counted), both complete once it closes', async () => {
    await h.restart({ BREAKER_VOLUME_THRESHOLD: '3', BREAKER_ERROR_THRESHOLD_PERCENT: '50', BREAKER_RESET_TIMEOUT_MS: '1000', CONFIRM_MAX_ATTEMPTS: '8', CONFIRM_RETRY_BASE_MS: '200' });
    try {
      const s = uniqueSku('BRK');
      await h.api.putSku(s, 20);
      await h.sim.setFaults({ errorRate: 1 });
      const held = await Promise.all(Array.from({ length: 5 }, () => tryHeld(h.api, s, 1)));
      expect(held.every((r) => r.status === 201 && r.body.payment.status === 'authorizing')).toBe(true);
      await waitFor('the breaker to open', async () => /tcc_payment_circuit_state 2/.test((await h.api.get('/metrics')).body));
      await waitFor('an authorization deferred by it', async () => {
        const rows = await h.db.query(`SELECT 1 FROM order_events WHERE type = 'payment.breaker_rejected' AND order_id = ANY ($1::uuid[])`, [held.map((r) => r.body.id)]);
        return rows.length > 0;
      });
      await h.sim.setFaults({ errorRate: 0 });
      for (const r of held) {
        await waitFor('authorized', async () => (await get(r.body.id)).payment.status === 'authorized', 30_000);
        const c = await h.api.post(`/orders/${r.body.id}/confirm`);
        expect(c.status).toBe(200);
        expect(await moneyBroken(h.sim, c.body)).toEqual([]);
      }
    } finally {
      await h.restart();
    }
  });
});

it('a key sent again with another customer is refused; a new key is a new order with its own authorization', async () => {
  const s = uniqueSku('KEYS');
  await h.api.putSku(s, 5);
  const key = randomUUID();
  const a = await tryHeld(h.api, s, 1, 'tok_ok', key);
  const b = await tryHeld(h.api, s, 1, 'tok_ok');
  expect(a.body.id).not.toBe(b.body.id);
  expect((await h.sim.ledger()).payments.map((p) => p.reference).sort()).toEqual([a.body.id, b.body.id].sort());
});
