import { randomUUID } from 'node:crypto';
import type { TestDatabase } from './database.js';
import type { Client } from './http.js';
import type { SimulatorHandle } from './simulator.js';

/** A Try that holds its payment (API.md "Payment held at Try"): the answer, whatever it is. */
export async function tryHeld(api: Client, sku: string, quantity = 1, paymentToken = 'tok_ok', key: string = randomUUID()) {
  return api.order(key, { customerId: 'c-held', items: [{ sku, quantity }], payment: { paymentToken } });
}

/** Seeds a SKU and holds `quantity` of it with its payment; throws unless the Try answered 201. */
export async function reserveHeld(api: Client, sku: string, quantity = 1, onHand = 10, priceMinor = 1000): Promise<any> {
  const put = await api.putSku(sku, onHand, priceMinor);
  if (put.status !== 200) throw new Error(`PUT sku -> ${put.status} ${JSON.stringify(put.body)}`);
  const res = await tryHeld(api, sku, quantity);
  if (res.status !== 201) throw new Error(`Try -> ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * The money invariant of API.md for one order authorized at Try, at the simulator: a
 * CONFIRM_SUCCESS order has exactly one capture of its amount and nothing held; a CANCELED or
 * PAY_FAILED one has nothing captured (or refunded in full) and no authorization left open.
 * Returns what breaks it (empty when it holds).
 */
export async function moneyBroken(sim: SimulatorHandle, order: { id: string; status: string; amountMinor: number | string }): Promise<string[]> {
  const h = await sim.holdsFor(order.id);
  const broken: string[] = [];
  if (h.open !== 0) broken.push(`${h.open} authorization(s) still open`);
  if (order.status === 'CONFIRM_SUCCESS') {
    if (h.captures !== 1) broken.push(`${h.captures} captures`);
    if (h.netCapturedMinor !== Number(order.amountMinor)) broken.push(`${h.netCapturedMinor} captured of ${order.amountMinor}`);
  } else if (h.netCapturedMinor !== 0) broken.push(`${h.netCapturedMinor} still captured on a ${order.status} order`);
  return broken;
}

/**
 * What must hold at the gateway at any moment, settled or not: at most one charge (or capture) and
 * one authorization per order, and every confirmed order authorized at Try holding exactly one
 * capture of its amount and no open authorization.
 */
export async function moneyAtAnyMoment(db: TestDatabase, sim: SimulatorHandle): Promise<unknown[]> {
  // The orders first, then the gateway: an order confirmed by then was captured before the ledger is read.
  const confirmed = new Map(
    (await db.query<{ id: string; amount_minor: string }>(`SELECT id, amount_minor FROM orders WHERE status = 'CONFIRM_SUCCESS' AND payment_status IS NOT NULL`)).map((o) => [o.id, Number(o.amount_minor)]),
  );
  const ledger = await sim.ledger();
  const per = new Map<string, { captures: number; authorizations: number; open: number; captured: number }>();
  for (const p of ledger.payments) {
    const e = per.get(p.reference) ?? { captures: 0, authorizations: 0, open: 0, captured: 0 };
    if (p.status === 'succeeded') {
      e.captures += 1;
      e.captured += (p.capturedMinor ?? p.amountMinor) - p.refundedMinor;
    }
    if (p.authorizationExpiresAt !== undefined && p.status !== 'declined') e.authorizations += 1;
    if (p.status === 'authorized') e.open += 1;
    per.set(p.reference, e);
  }
  const broken: unknown[] = [];
  for (const [reference, e] of per) if (e.captures > 1 || e.authorizations > 1) broken.push({ reference, ...e });
  for (const [id, amount] of confirmed) {
    const e = per.get(id);
    if (!e || e.captures !== 1 || e.captured !== amount || e.open !== 0) broken.push({ confirmed: id, amount, ...e });
  }
  return broken;
}
