import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '../database.js';
import { client } from '../http.js';
import type { SimulatorHandle } from '../simulator.js';
import { stockByLocation, stockDrift } from '../stock.js';

/**
 * A checkout load for the topology specs, and the checks that follow it (the same ones the chaos
 * spec makes): every order final, paid orders charged exactly once, released ones not at all,
 * stock back to what was sold and its ledger adding up.
 */

const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)];

export interface LoadResult {
  /** HTTP statuses of every answer. */
  statuses: Record<number, number>;
  /** Orders created. */
  orders: number;
  /** Requests that got no answer at all (refused connection, reset): none expected. */
  unanswered: number;
}

/**
 * `shoppers` clients, each in turn: a Try of one or two SKUs, then a Confirm (a few with a
 * declined token, some with the gateway scripted to fail), a Cancel, or nothing (the TTL ends
 * it), spread over `apis`, until `until`. A Try refused 503 is sent again with its key.
 */
export async function checkoutLoad(opts: { apis: string[]; skus: string[]; until: number; shoppers: number; sim: SimulatorHandle }): Promise<LoadResult> {
  const result: LoadResult = { statuses: {}, orders: 0, unanswered: 0 };
  const send = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    try {
      const res = await client(pick(opts.apis)).send(method, path, { body, headers });
      result.statuses[res.status] = (result.statuses[res.status] ?? 0) + 1;
      return res;
    } catch {
      result.unanswered += 1;
      return undefined;
    }
  };
  const shopper = async () => {
    while (Date.now() < opts.until) {
      const key = randomUUID();
      const items = [...new Set([pick(opts.skus), ...(Math.random() < 0.4 ? [pick(opts.skus)] : [])])].map((sku) => ({ sku, quantity: 1 + Math.floor(Math.random() * 2) }));
      let order: { id: string } | undefined;
      for (let i = 0; i < 5 && !order; i++) {
        const res = await send('POST', '/orders', { customerId: 'topology', items }, { 'idempotency-key': key });
        if (res?.status === 201 || res?.status === 200) order = res.body;
        else if (res?.status === 503) await sleep(100);
        else break;
      }
      if (!order) continue;
      result.orders += 1;
      const roll = Math.random();
      if (roll < 0.1) await send('POST', `/orders/${order.id}/cancel`, undefined);
      else if (roll < 0.8) {
        if (Math.random() < 0.2) await opts.sim.script([pick(['charge_then_hang', 'charge_then_error', 'hang', 'error'] as const)]);
        await send('POST', `/orders/${order.id}/confirm`, Math.random() < 0.05 ? { paymentToken: 'tok_decline' } : {});
      } // else: abandoned, its TTL ends it
    }
  };
  await Promise.all(Array.from({ length: opts.shoppers }, shopper));
  return result;
}

/** Orders still holding stock. */
export async function holdingOrders(db: TestDatabase): Promise<string[]> {
  return (await db.query<{ id: string }>(`SELECT id::text FROM orders WHERE status = ANY ($1::text[])`, [HOLDING])).map((r) => r.id);
}

/** Orders holding stock whose expiry or next step is more than `lateMs` overdue by the database's clock, with when that was due (epoch ms). */
export async function overdueOrders(db: TestDatabase, lateMs: number): Promise<{ id: string; dueAt: number }[]> {
  const rows = await db.query<{ id: string; due_at: string }>(
    `SELECT id::text, (extract(epoch FROM least(reservation_expires_at, next_action_at)) * 1000)::bigint AS due_at
       FROM orders WHERE status = ANY ($1::text[])
        AND least(reservation_expires_at, next_action_at) < now() - make_interval(secs => $2::float8 / 1000)`,
    [HOLDING, lateMs],
  );
  return rows.map((r) => ({ id: r.id, dueAt: Number(r.due_at) }));
}

/** Waits until no order holds stock; returns those still holding when the time is up. */
export async function settle(db: TestDatabase, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let open = await holdingOrders(db);
  while (open.length && Date.now() < deadline) {
    await sleep(250);
    open = await holdingOrders(db);
  }
  return open;
}

/** On hand at each `sku@location` now (before the load). */
export async function stockSnapshot(db: TestDatabase, skus: string[]): Promise<Record<string, number>> {
  return Object.fromEntries((await stockByLocation(db, skus)).map((r) => [`${r.sku}@${r.location_id}`, r.on_hand]));
}

/**
 * Once every order is final: what breaks the money and stock invariants (empty when all hold). A
 * paid order is charged once, net of refunds its amount; any other order nets nothing (a refund
 * still on its way is waited for, up to `refundWaitMs`); at each location nothing is reserved and
 * on hand fell by exactly what was sold, its ledger agreeing.
 */
export async function invariantBreaks(db: TestDatabase, sim: SimulatorHandle, skus: string[], start: Record<string, number>, refundWaitMs = 20_000): Promise<unknown[]> {
  const orders = await db.query<{ id: string; status: string; amount_minor: string }>(`SELECT id::text, status, amount_minor FROM orders`);
  const deadline = Date.now() + refundWaitMs;
  let breaks: unknown[];
  for (;;) {
    const net = new Map<string, { succeeded: number; net: number }>();
    for (const p of (await sim.ledger()).payments) {
      const e = net.get(p.reference) ?? { succeeded: 0, net: 0 };
      if (p.status === 'succeeded') {
        e.succeeded += 1;
        e.net += p.amountMinor - p.refundedMinor;
      }
      net.set(p.reference, e);
    }
    breaks = [];
    let refundsOnTheWay = 0;
    for (const o of orders) {
      const e = net.get(o.id) ?? { succeeded: 0, net: 0 };
      if (HOLDING.includes(o.status)) breaks.push({ order: o.id, still: o.status });
      if (e.succeeded > 1) breaks.push({ order: o.id, chargedTimes: e.succeeded });
      if (o.status === 'CONFIRM_SUCCESS' && e.net !== Number(o.amount_minor)) breaks.push({ order: o.id, paid: e.net, owed: Number(o.amount_minor) });
      if (o.status !== 'CONFIRM_SUCCESS' && e.net !== 0) refundsOnTheWay += 1;
    }
    if (!refundsOnTheWay || Date.now() > deadline) {
      if (refundsOnTheWay) breaks.push({ refundsNotMade: refundsOnTheWay });
      break;
    }
    await sleep(250);
  }
  for (const s of await stockByLocation(db, skus)) {
    const expected = start[`${s.sku}@${s.location_id}`] - s.sold;
    if (s.on_hand !== expected || s.reserved !== 0) breaks.push({ stock: s, expectedOnHand: expected });
  }
  breaks.push(...(await stockDrift(db, skus)).map((d) => ({ drift: d })));
  return breaks;
}

/** Order statuses, counted. */
export async function ordersByStatus(db: TestDatabase): Promise<Record<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM orders GROUP BY status ORDER BY status`);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
