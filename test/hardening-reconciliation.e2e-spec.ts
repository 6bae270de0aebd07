import { randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * Reconciliation (hardening issue, point 15): a pass covers every order in its window that was ever
 * sent to the gateway, page by page (pages are 200 orders); GET only reports, POST acts; the
 * scheduled pass (every second here) keeps its cursor in job_state, across restarts, and only looks
 * at orders past any possible TTL by the database's clock (so these tests move orders back in time).
 */
const h = useHarness({ RECONCILE_INTERVAL_MS: '1000', RESERVATION_TTL_MS: '60000', RESERVATION_MAX_TTL_MS: '60000', PARTICIPANT_TTL_MS: '60000', CONFIRM_RETRY_BASE_MS: '600000' });

const ORDERS = 205;
const ids: string[] = [];

/** A second capture for an order, as a gateway glitch or a duplicate submission would leave it. */
async function strayCapture(orderId: string, amountMinor = 1000): Promise<string> {
  const res = await fetch(`${h.sim.url}/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': `stray-${randomUUID()}` },
    body: JSON.stringify({ amountMinor, currency: 'USD', reference: orderId }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}
const attention = async (id: string): Promise<boolean> => (await h.api.admin('GET', `/admin/orders/${id}`)).body.needsAttention;
const jobState = async () => (await h.db.query<{ state: any }>(`SELECT state FROM job_state WHERE name = 'reconciliation'`))[0]?.state;

beforeAll(async () => {
  const s = uniqueSku('REC');
  expect((await h.api.putSku(s, 1000, 1000)).status).toBe(200);
  // Created one after another, so the last one is the newest: on the second page of any pass.
  for (let i = 0; i < ORDERS; i += 15) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(15, ORDERS - i) }, async () => {
        const order = await h.api.order(randomUUID(), { customerId: 'c-rec', items: [{ sku: s, quantity: 1 }] });
        expect(order.status).toBe(201);
        return order.body.id as string;
      }),
    );
    for (const id of batch) {
      expect((await h.api.post(`/orders/${id}/confirm`, {})).status).toBe(200);
      ids.push(id);
    }
  }
  const [{ newest }] = await h.db.query<{ newest: string }>(`SELECT id AS newest FROM orders ORDER BY created_at DESC, id DESC LIMIT 1`);
  ids.splice(ids.indexOf(newest), 1);
  ids.push(newest); // ids[ORDERS - 1] is the last order of the window
}, 120_000);

describe('on demand', () => {
  it('GET pages through the whole window and reports the mismatch on its last page, changing nothing', async () => {
    const last = ids[ORDERS - 1];
    await strayCapture(last);
    const report = await h.api.admin('GET', '/admin/reconciliation?sinceMinutes=60');
    expect(report.status).toBe(200);
    expect(report.body.truncated).toBe(false);
    expect(report.body.checked).toBeGreaterThanOrEqual(ORDERS);
    expect(report.body.mismatches).toEqual([{ orderId: last, kind: 'multiple_captures', detail: expect.any(String) }]);
    expect(await attention(last)).toBe(false);
    expect((await h.api.admin('GET', `/admin/orders/${last}/events`)).body.data.map((e: any) => e.type)).not.toContain('attention.needed');
  });

  it('POST does the same pass and flags the order; acknowledging clears the flag', async () => {
    const last = ids[ORDERS - 1];
    const acted = await h.api.admin('POST', '/admin/reconciliation', { sinceMinutes: 60 });
    expect(acted.status).toBe(200);
    expect(acted.body).toMatchObject({ truncated: false, mismatches: [expect.objectContaining({ orderId: last, kind: 'multiple_captures' })] });
    expect(acted.body.checked).toBeGreaterThanOrEqual(ORDERS);
    expect(await attention(last)).toBe(true);
    expect((await h.api.admin('POST', `/admin/orders/${last}/acknowledge`, { reason: 'looking into it' })).body.needsAttention).toBe(false);
  });

  it('a window that ends before the orders were created checks none of them', async () => {
    // The scheduled pass is looking from here on (the orders become settled): what it must find goes in first.
    await strayCapture(ids[ORDERS - 3]);
    await h.db.query(`UPDATE orders SET created_at = created_at - interval '3 hours' WHERE id = ANY ($1::uuid[])`, [ids]);
    const report = await h.api.admin('GET', '/admin/reconciliation?sinceMinutes=60');
    expect(report.body).toMatchObject({ checked: 0, mismatches: [], truncated: false });
    const wide = await h.api.admin('GET', '/admin/reconciliation?sinceMinutes=240');
    expect(wide.body.checked).toBeGreaterThanOrEqual(ORDERS);
  });
});

describe('the scheduled pass', () => {
  it('pages through every settled order, flags what it finds on the last page, and saves its cursor', async () => {
    const late = ids[ORDERS - 3];
    await waitFor('the scheduled pass to flag the order on its second page', () => attention(late), 30_000, 250);
    const [newest] = await h.db.query<{ id: string; created_at: string }>(`SELECT id, created_at::text FROM orders WHERE id = $1`, [ids[ORDERS - 1]]);
    await waitFor('the cursor to reach the last order', async () => (await jobState())?.cursor?.id === newest.id, 10_000, 100);
    const state = await jobState();
    expect(state.cursor).toEqual({ id: newest.id, createdAt: newest.created_at });
    expect(typeof state.lastSuccessMs).toBe('number');
    const [{ db_ms }] = await h.db.query<{ db_ms: number }>(`SELECT extract(epoch FROM now()) * 1000 AS db_ms`);
    expect(Math.abs(Number(db_ms) - state.lastSuccessMs)).toBeLessThan(60_000);
    const text = (await h.api.get('/metrics')).body as string;
    expect(text).toMatch(/^tcc_reconciliation_last_success_timestamp_seconds [1-9]/m);
  });

  it('remembers where it got to across a restart: orders behind the cursor are not looked at again, newer ones are', async () => {
    await h.restart();
    const behind = ids[100];
    await strayCapture(behind);
    // A new order, settled and newer than every order the cursor has passed.
    const s = uniqueSku('REC2');
    expect((await h.api.putSku(s, 10, 1000)).status).toBe(200);
    const newer = (await h.api.order(randomUUID(), { customerId: 'c-rec', items: [{ sku: s, quantity: 1 }] })).body.id;
    expect((await h.api.post(`/orders/${newer}/confirm`, {})).status).toBe(200);
    await strayCapture(newer);
    await h.db.query(`UPDATE orders SET created_at = now() - interval '2 hours' WHERE id = $1`, [newer]);

    await waitFor('the scheduled pass to flag the newer order', () => attention(newer), 30_000, 250);
    await waitFor('the cursor to move to the newer order', async () => (await jobState())?.cursor?.id === newer, 10_000, 100);
    expect(await attention(behind)).toBe(false);
    // On demand, the whole window is looked at again: the order behind the cursor is found.
    const report = await h.api.admin('GET', '/admin/reconciliation?sinceMinutes=240');
    expect(report.body.mismatches.map((m: any) => m.orderId)).toEqual(expect.arrayContaining([behind, newer]));
  });
});

describe('the horizon', () => {
  /** Waits for two passes that end after now: the one running now may have started before the set-up. */
  async function twoPasses(): Promise<void> {
    const [{ db_ms }] = await h.db.query<{ db_ms: number }>(`SELECT extract(epoch FROM now()) * 1000 AS db_ms`);
    await waitFor('a pass after the set-up', async () => Number((await jobState())?.lastSuccessMs) > Number(db_ms), 15_000, 100);
    const first = Number((await jobState()).lastSuccessMs);
    await waitFor('one more pass', async () => Number((await jobState())?.lastSuccessMs) > first, 15_000, 100);
  }

  it('an order still watched for a refund holds the cursor until its watch ends: a charge that lands after the watch is found, and so is the order behind it', async () => {
    const s = uniqueSku('REC3');
    expect((await h.api.putSku(s, 10, 1000)).status).toBe(200);
    // Released while its charge request may have reached the gateway: watched for a refund — for an
    // hour here, with the watch's own next look an hour away too.
    const watched = (await h.api.order(randomUUID(), { customerId: 'c-rec', items: [{ sku: s, quantity: 1 }] })).body.id as string;
    await h.db.query(`UPDATE orders SET payment_requested_at = now(), payment_sent_at = now() WHERE id = $1`, [watched]);
    expect((await h.api.post(`/orders/${watched}/cancel`)).status).toBe(200);
    await h.db.query(
      `UPDATE orders SET created_at = now() - interval '1 hour', refund_check_until = now() + interval '1 hour', refund_next_at = now() + interval '1 hour' WHERE id = $1`,
      [watched],
    );
    // Behind it, a settled order with a capture too many.
    const behind = (await h.api.order(randomUUID(), { customerId: 'c-rec', items: [{ sku: s, quantity: 1 }] })).body.id as string;
    expect((await h.api.post(`/orders/${behind}/confirm`, {})).status).toBe(200);
    await strayCapture(behind);
    await h.db.query(`UPDATE orders SET created_at = now() - interval '1 hour' + interval '1 second' WHERE id = $1`, [behind]);

    await twoPasses();
    const [{ at }] = await h.db.query<{ at: string }>(`SELECT created_at::text AS at FROM orders WHERE id = $1`, [watched]);
    const cursor = (await jobState()).cursor;
    expect(new Date(cursor.createdAt).getTime()).toBeLessThan(new Date(at).getTime());
    expect(await attention(behind)).toBe(false);

    // The charge lands after all, and the watch ends without having seen it.
    await strayCapture(watched);
    await h.db.query(`UPDATE orders SET refund_check_until = now() - interval '1 second' WHERE id = $1`, [watched]);
    await waitFor('the pass to find the charge on the released order', () => attention(watched), 30_000, 250);
    await waitFor('and the order behind it', () => attention(behind), 30_000, 250);
    await waitFor('the gateway to have refunded the charge', async () => (await h.sim.chargesFor(watched)).netCapturedMinor === 0, 30_000, 250);
  });
});

describe('after an operator fixed it', () => {
  it('a duplicate capture refunded at the gateway and acknowledged is not raised again by the next pass', async () => {
    const order = ids[ORDERS - 3]; // flagged by the scheduled pass above
    expect(await attention(order)).toBe(true);
    const payments = (await h.sim.ledger()).payments.filter((p) => p.reference === order && p.status === 'succeeded');
    expect(payments).toHaveLength(2);
    const refund = await fetch(`${h.sim.url}/payments/${payments[1].id}/refunds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `manual-${order}` },
      body: JSON.stringify({ amountMinor: payments[1].amountMinor }),
    });
    expect(refund.status).toBe(201);
    expect((await h.api.admin('POST', `/admin/orders/${order}/acknowledge`, { reason: 'duplicate refunded by hand' })).body.needsAttention).toBe(false);

    const acted = await h.api.admin('POST', '/admin/reconciliation', { sinceMinutes: 240 });
    expect(acted.status).toBe(200);
    expect(acted.body.mismatches.map((m: any) => m.orderId)).not.toContain(order);
    expect(await attention(order)).toBe(false);
  });
});
