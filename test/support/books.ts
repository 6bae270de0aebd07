import type { LedgerSnapshot } from './simulator.js';

/**
 * The money invariants against the gateway's own ledger: an order is charged at most once; a
 * confirmed order keeps exactly its amount; any other keeps nothing (what was charged is refunded).
 * Returns the orders that break one (`wrong`) and those whose refund has not come yet (`refunding`).
 */
export function moneyBooks(orders: { id: string; status: string; amount_minor: string | number }[], ledger: LedgerSnapshot): { wrong: unknown[]; refunding: string[] } {
  const net = new Map<string, { succeeded: number; net: number }>();
  for (const p of ledger.payments) {
    const e = net.get(p.reference) ?? { succeeded: 0, net: 0 };
    if (p.status === 'succeeded') {
      e.succeeded += 1;
      e.net += p.amountMinor - p.refundedMinor;
    }
    net.set(p.reference, e);
  }
  const wrong: unknown[] = [];
  const refunding: string[] = [];
  for (const o of orders) {
    const e = net.get(o.id) ?? { succeeded: 0, net: 0 };
    if (e.succeeded > 1) wrong.push({ order: o.id, charged: e.succeeded });
    if (o.status === 'CONFIRM_SUCCESS') {
      if (e.net !== Number(o.amount_minor)) wrong.push({ order: o.id, status: o.status, kept: e.net, amount: Number(o.amount_minor) });
    } else if (e.net !== 0) refunding.push(o.id);
  }
  return { wrong, refunding };
}
