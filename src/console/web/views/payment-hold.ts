import { h } from '../dom.js';
import { money, relative, time } from '../format.js';
import type { AdminOrder, TimelineEvent } from '../types.js';

/** What each state of a payment held at Try means, in words. */
const IN_WORDS: Record<string, string> = {
  authorizing: 'Authorizing: the gateway has not answered yet; the service asks again',
  authorized: 'Authorized: the amount is held on the customer’s card',
  declined: 'Declined: nothing was held',
  capturing: 'Capturing: the capture was asked for; its outcome is not known yet',
  captured: 'Captured',
  voiding: 'Voiding: the hold is being released',
  voided: 'Voided: nothing is held',
  expired: 'Expired: the authorization ended by itself; nothing is held',
};

/**
 * "Payment" of an order whose payment was held at Try (API.md): the authorization, its expiry and
 * what was captured, from the order itself (the gateway's own record follows it). Nothing for an
 * order paid at Confirm.
 */
export function paymentHold(o: AdminOrder): HTMLElement | null {
  const p = o.payment;
  if (!p) return null;
  const row = (label: string, ...value: (Node | string | null)[]) => h('div', { class: 'detail' }, h('dt', null, label), h('dd', null, ...value));
  const expiry = p.authorizationExpiresAt;
  return h(
    'div',
    { class: 'payment-hold' },
    h('p', { class: 'hint' }, 'Held at Try: authorized with the reservation, captured at Confirm, voided on release.'),
    h(
      'dl',
      { class: 'details' },
      row('Authorization', IN_WORDS[p.status] ?? p.status),
      row('Authorized', p.authorizedMinor === null ? '—' : money(p.authorizedMinor, o.currency)),
      row('Authorization expires', ...(expiry ? [time(expiry), h('span', { class: 'relative' }, ` (${relative(expiry)})`)] : ['—'])),
      row('Captured', money(p.capturedMinor, o.currency)),
    ),
  );
}

/** The timeline's names of a held payment's events, in words. */
export const PAYMENT_HOLD_EVENTS: Record<string, string> = {
  'payment.authorize': 'Authorization sent',
  'payment.capture': 'Capture sent',
  'payment.void': 'Void sent',
  'payment.changed': 'Payment changed',
  'authorization.retry_scheduled': 'Authorization retry scheduled',
};

/** Why an order with a held payment needs a human, in words (undefined: not one of its reasons). */
export function paymentHoldAttention(e: TimelineEvent): string | undefined {
  const detail = typeof e.data.detail === 'string' ? ` (${e.data.detail})` : '';
  if (e.data.reason === 'void_failing') return `The void of the order’s authorization has kept failing for longer than the service waits before it alerts a person: the customer’s money is still held. The service keeps trying; check the gateway and the Payment below.`;
  if (e.data.reason !== 'reconciliation_mismatch') return undefined;
  switch (e.data.kind) {
    case 'authorized_after_release':
      return `The order was released, yet an authorization still held the customer’s money after its watch; it was voided${detail}.`;
    case 'uncaptured_authorization':
      return `The order is confirmed, but its authorization was never captured; reconciliation captured it${detail}.`;
    case 'extra_authorization':
      return `The order is confirmed and captured, yet another authorization held money besides; it was voided${detail}.`;
    default:
      return undefined;
  }
}
