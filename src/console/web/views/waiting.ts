import { relative } from '../format.js';
import type { AdminOrder } from '../types.js';

/**
 * When a CONFIRM_PENDING order's next step runs, in words: its next retry, unless its reservation
 * expires first — then the expiry's gateway lookup decides it.
 */
export function nextStep(o: AdminOrder): string {
  const expiry = Date.parse(o.reservationExpiresAt);
  const next = o.nextActionAt ? Date.parse(o.nextActionAt) : undefined;
  if (next === undefined && !(expiry > Date.now())) return 'when its current attempt ends';
  if (next === undefined || expiry <= next) return expiry <= Date.now() ? 'gateway lookup at its expiry, due now' : `gateway lookup at its expiry, ${relative(o.reservationExpiresAt)}`;
  return next <= Date.now() ? 'next retry due now' : `next retry ${relative(o.nextActionAt)}`;
}

/** Why a CONFIRM_PENDING order waits and when it moves on, one line for the list: "gateway error 503 · next retry in 40 s". */
export function waiting(o: AdminOrder): string {
  if (o.status !== 'CONFIRM_PENDING') return '';
  return [o.lastOutcome?.text, nextStep(o)].filter(Boolean).join(' · ');
}
