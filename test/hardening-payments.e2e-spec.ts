import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN } from './support/env.js';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { reserve, uniqueSku, waitForStatus } from './support/orders.js';
import type { SimMode } from './support/simulator.js';

/**
 * Payments (hardening issue, points 11-14 and 16), against the gateway simulator: zero totals,
 * final refusals, racing Confirms and the fixed payment token, a charge in flight at the TTL, and a
 * capture that lands on a force-confirmed order. Retries never run by themselves here (a 10-minute
 * backoff): each test moves an order on explicitly.
 */
const h = useHarness({ PAYMENT_TIMEOUT_MS: '4000', CONFIRM_RETRY_BASE_MS: '600000', RESERVATION_TTL_MS: '60000' });
const tokensUsed: string[] = [];

beforeEach(() => h.sim.reset());

const metric = async (series: string): Promise<number> => {
  const text = (await h.api.get('/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
};
const attempts = async (orderId: string) => (await h.sim.ledger()).chargeAttempts.filter((a) => a.reference === orderId);
const storedToken = async (orderId: string) => (await h.db.query<{ t: string | null }>('SELECT payment_token AS t FROM orders WHERE id = $1', [orderId]))[0].t;
const events = async (orderId: string): Promise<{ type: string; data: any }[]> => (await h.api.admin('GET', `/admin/orders/${orderId}/events`)).body.data;
const confirm = (orderId: string, paymentToken?: string) => {
  if (paymentToken) tokensUsed.push(paymentToken);
  return h.api.post(`/orders/${orderId}/confirm`, paymentToken === undefined ? {} : { paymentToken });
};
const token = (name: string) => `tok_${name}_${randomUUID().slice(0, 8)}`;

describe('11. an order whose total is 0', () => {
  it('confirms without a gateway call, even with the gateway down', async () => {
    await h.sim.setFaults({ down: true });
    const s = uniqueSku('ZERO');
    expect((await h.api.putSku(s, 5, 0)).status).toBe(200);
    const order = (await h.api.order(randomUUID(), { customerId: 'c-zero', items: [{ sku: s, quantity: 2 }] })).body;
    expect(order.amountMinor).toBe(0);

    const res = await confirm(order.id, token('zero'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CONFIRM_SUCCESS', amountMinor: 0, paymentId: null });
    expect(await h.sim.ledger()).toMatchObject({ chargeRequests: 0, payments: [] });
    expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 3, reserved: 0 });
    expect((await events(order.id)).map((e) => e.type)).toContain('payment.skipped');
    expect(await storedToken(order.id)).toBeNull();
  });
});

describe('12. a 400/401/403/404/422 from the gateway on a charge is a final refusal', () => {
  it.each([400, 401, 403, 404, 422])('%i: PAY_FAILED at once (402 + order naming the status), stock released, one attempt, counted', async (status) => {
    const series = `tcc_gateway_refusals_total{operation="charge",status="${status}"}`;
    const refusedBefore = await metric(series);
    const failedBefore = await metric('tcc_confirm_failures_total{reason="refused"}');
    const s = uniqueSku(`REF${status}`);
    const order = await reserve(h.api, s, 2);
    await h.sim.script([`refuse_${status}` as SimMode]);

    const res = await confirm(order.id, token('refused'));
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ id: order.id, status: 'PAY_FAILED', confirmAttempts: 1 });
    expect(res.body.failureReason).toMatch(new RegExp(`\\b${status}\\b`));
    expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 10, reserved: 0 });
    expect(await metric(series)).toBe(refusedBefore + 1);
    expect(await metric('tcc_confirm_failures_total{reason="refused"}')).toBe(failedBefore + 1);
    expect(await storedToken(order.id)).toBeNull();

    // Final: no retry is scheduled, and a second Confirm answers the same outcome without a call.
    await new Promise((r) => setTimeout(r, 700));
    const again = await confirm(order.id, token('again'));
    expect(again.status).toBe(402);
    expect(again.body.status).toBe('PAY_FAILED');
    expect(await attempts(order.id)).toHaveLength(1);
    expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 0 });
  });

  it('a 429 is not final: CONFIRM_PENDING, nothing released', async () => {
    const s = uniqueSku('RL');
    const order = await reserve(h.api, s, 1);
    await h.sim.script(['rate_limit']);
    const res = await confirm(order.id);
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('CONFIRM_PENDING');
    expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ reserved: 1 });
  });
});

describe('13. concurrent Confirms of one order', () => {
  it('one gateway attempt at a time: a Confirm arriving mid-attempt answers the order as it stands and starts nothing', async () => {
    const order = await reserve(h.api, uniqueSku('RACE'), 1);
    await h.sim.setFaults({ hangMs: 1500, script: ['slow_ok'] });
    const first = token('first');
    const inFlight = confirm(order.id, first);
    await waitFor('the first attempt to reach the gateway', async () => (await attempts(order.id)).length === 1, 5000, 20);

    const started = Date.now();
    const second = await confirm(order.id, token('second'));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(second.status).toBe(202);
    expect(second.body).toMatchObject({ id: order.id, status: 'TRY_SUCCESS' });

    const done = await inFlight;
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('CONFIRM_SUCCESS');
    expect(await attempts(order.id)).toEqual([{ reference: order.id, paymentToken: first }]);
    expect(await h.sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 1000 });

    const later = await confirm(order.id, token('later'));
    expect(later.status).toBe(200);
    expect(await attempts(order.id)).toHaveLength(1);
    expect(await storedToken(order.id)).toBeNull();
  });

  it('eight Confirms at once with eight tokens: exactly one gateway attempt, one charge', async () => {
    const s = uniqueSku('RACE8');
    const order = await reserve(h.api, s, 1);
    await h.sim.setFaults({ hangMs: 600, script: ['slow_ok'] });
    const tokens = Array.from({ length: 8 }, (_, i) => token(`t${i}`));
    const answers = await Promise.all(tokens.map((t) => confirm(order.id, t)));
    expect(answers.every((a) => a.status === 200 || a.status === 202)).toBe(true);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
    const made = await attempts(order.id);
    expect(made).toHaveLength(1);
    expect(tokens).toContain(made[0].paymentToken);
    expect((await waitForStatus(h.api, order.id, ['CONFIRM_SUCCESS'])).status).toBe('CONFIRM_SUCCESS');
    expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 1 });
    expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 9, reserved: 0 });
  });

  it('the token is fixed by the first attempt: a later Confirm with another token charges the first one', async () => {
    const order = await reserve(h.api, uniqueSku('TOKEN'), 1);
    await h.sim.script(['error', 'ok']);
    const first = token('A');
    const pending = await confirm(order.id, first);
    expect(pending.status).toBe(202);
    expect(pending.body.status).toBe('CONFIRM_PENDING');
    expect(await storedToken(order.id)).toBe(first);

    // Not due yet (the backoff is 10 minutes): another Confirm answers the state and calls nobody.
    const early = await confirm(order.id, token('B'));
    expect(early.status).toBe(202);
    expect(await attempts(order.id)).toHaveLength(1);

    // Once the retry is due, a Confirm with yet another token runs it — with the first token.
    await h.db.query('UPDATE orders SET next_action_at = now() WHERE id = $1', [order.id]);
    const due = await confirm(order.id, token('C'));
    expect(due.status).toBe(200);
    expect(due.body.status).toBe('CONFIRM_SUCCESS');
    expect((await attempts(order.id)).map((a) => a.paymentToken)).toEqual([first, first]);
    expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 1 });
    expect(await storedToken(order.id)).toBeNull();
  });

  it('tokens are erased when the order ends, whichever way it ends', async () => {
    const declined = await reserve(h.api, uniqueSku('TDEC'), 1);
    tokensUsed.push('tok_decline');
    expect((await h.api.post(`/orders/${declined.id}/confirm`, { paymentToken: 'tok_decline' })).status).toBe(402);

    const canceled = await reserve(h.api, uniqueSku('TCAN'), 1);
    await h.sim.script(['error']);
    const t = token('cancel');
    expect((await confirm(canceled.id, t)).status).toBe(202);
    expect(await storedToken(canceled.id)).toBe(t);
    expect((await h.api.post(`/orders/${canceled.id}/cancel`)).body.status).toBe('CANCELED');

    const forced = await reserve(h.api, uniqueSku('TFORCE'), 1);
    await h.sim.script(['error']);
    expect((await confirm(forced.id, token('forced'))).status).toBe(202);
    expect((await h.api.admin('POST', `/admin/orders/${forced.id}/force-confirm`, { reason: 'settled by phone' })).status).toBe(200);

    for (const id of [declined.id, canceled.id, forced.id]) expect([id, await storedToken(id)]).toEqual([id, null]);
    const [{ n }] = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM orders WHERE payment_token IS NOT NULL AND status IN ('CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED')`,
    );
    expect(n).toBe(0);
  });
});

describe('14. a charge still in flight when the TTL passes', () => {
  it('is awaited: the customer who paid in time gets the order, and is not refunded', async () => {
    const s = uniqueSku('FLIGHT');
    const order = await reserve(h.api, s, 1);
    // The TTL passes half a second into an attempt that lands after three (within PAYMENT_TIMEOUT_MS).
    await h.db.query(`UPDATE orders SET reservation_expires_at = now() + interval '500 milliseconds' WHERE id = $1`, [order.id]);
    await h.sim.setFaults({ hangMs: 3000, script: ['slow_ok'] });
    const started = Date.now();
    const res = await confirm(order.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('CONFIRM_SUCCESS');

    // Quiet for a while: no expiry, no refund comes after it.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await h.api.get(`/orders/${order.id}`)).body.status).toBe('CONFIRM_SUCCESS');
    expect(await h.sim.chargesFor(order.id)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 1000 });
    expect((await h.sim.ledger()).refunds).toEqual([]);
    expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 9, reserved: 0 });
    const types = (await events(order.id)).map((e) => e.type);
    expect(types).not.toContain('refund.owed');
  });
});

describe('16. a capture on a force-confirmed order', () => {
  it('is on the timeline and makes the order need attention until an operator acknowledges it', async () => {
    const order = await reserve(h.api, uniqueSku('FCCAP'), 1);
    const raisedBefore = await metric('tcc_orders_need_attention_total{reason="capture_on_force_confirmed"}');
    await h.sim.setFaults({ hangMs: 1500, script: ['slow_ok'] });
    const confirming = confirm(order.id);
    await waitFor('the attempt to reach the gateway', async () => (await attempts(order.id)).length === 1, 5000, 20);
    const forced = await h.api.admin('POST', `/admin/orders/${order.id}/force-confirm`, { reason: 'paid by bank transfer' });
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ status: 'CONFIRM_SUCCESS', needsAttention: false });

    // The charge then succeeds at the gateway: the customer paid twice over.
    const answer = await confirming;
    expect(answer.body.status).toBe('CONFIRM_SUCCESS');
    expect(await h.sim.chargesFor(order.id)).toMatchObject({ succeeded: 1, netCapturedMinor: 1000 });
    const view = (await h.api.admin('GET', `/admin/orders/${order.id}`)).body;
    expect(view).toMatchObject({ status: 'CONFIRM_SUCCESS', needsAttention: true });
    const timeline = await events(order.id);
    expect(timeline).toContainEqual(expect.objectContaining({ type: 'payment.charge', data: expect.objectContaining({ paymentId: expect.any(String) }) }));
    expect(timeline).toContainEqual(expect.objectContaining({ type: 'attention.needed', data: expect.objectContaining({ reason: 'capture_on_force_confirmed' }) }));
    const flagged = (await h.api.admin('GET', '/admin/orders?needsAttention=true&limit=1000')).body.data.map((o: any) => o.id);
    expect(flagged).toContain(order.id);
    expect(await metric('tcc_orders_needing_attention')).toBeGreaterThanOrEqual(1);
    // Raised once, like every flag: the counter and an error line with the alert, for the pager.
    expect(await metric('tcc_orders_need_attention_total{reason="capture_on_force_confirmed"}')).toBe(raisedBefore + 1);
    await waitFor('an error-level alert log line', async () =>
      h.svc.logs.some((l) => l.includes('"level":50') && l.includes(order.id) && l.includes('"alert":"capture_on_force_confirmed"')),
    );

    const ack = await h.api.admin('POST', `/admin/orders/${order.id}/acknowledge`, { reason: 'refunded at the gateway by hand, ticket OPS-7' });
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({ id: order.id, status: 'CONFIRM_SUCCESS', needsAttention: false });
    expect(ack.headers.get('cache-control')).toBe('no-store');
    expect(await events(order.id)).toContainEqual(expect.objectContaining({ type: 'operator.acknowledge', data: { reason: 'refunded at the gateway by hand, ticket OPS-7' } }));
    expect((await h.api.admin('GET', '/admin/orders?needsAttention=true&limit=1000')).body.data.map((o: any) => o.id)).not.toContain(order.id);

    // Acknowledging an order that does not need attention changes nothing.
    const count = (await events(order.id)).length;
    const again = await h.api.admin('POST', `/admin/orders/${order.id}/acknowledge`, { reason: 'again' });
    expect(again.status).toBe(200);
    expect(again.body.needsAttention).toBe(false);
    expect(await events(order.id)).toHaveLength(count);
  });
});

it('no payment token and no admin token ever reached a log line, and every line is JSON', async () => {
  // The logger writes asynchronously: once a last request's line is in, every earlier one is.
  const last = `last-${randomUUID()}`;
  await h.api.send('GET', '/inventory/LAST-LINE', { headers: { 'x-request-id': last } });
  await waitFor('the last request\'s log line', async () => h.svc.logs.some((l) => l.includes(last)));
  const all = h.svc.logs.join('\n');
  expect(tokensUsed.length).toBeGreaterThan(10);
  for (const t of tokensUsed) expect([t, all.includes(t)]).toEqual([t, false]);
  expect(all).not.toContain(ADMIN_TOKEN);
  const notJson = h.svc.logs.filter((l) => {
    try {
      return typeof JSON.parse(l) !== 'object';
    } catch {
      return true;
    }
  });
  expect(notJson).toEqual([]);
});
