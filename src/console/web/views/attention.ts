import { can } from '../api.js';
import { h } from '../dom.js';
import { relative, time } from '../format.js';
import type { AdminOrder, TimelineEvent } from '../types.js';
import { paymentHoldAttention } from './payment-hold.js';

/**
 * Why an order needs a human, in words, from its `attention.needed` event (`e`) and the timeline
 * before it — an operator reads this, so it names no setting, only what happened and when.
 */
export function attentionReason(e: TimelineEvent, events: TimelineEvent[]): string {
  const held = paymentHoldAttention(e);
  if (held) return held;
  const d = e.data;
  const detail = typeof d.detail === 'string' ? ` (${d.detail})` : '';
  switch (d.reason) {
    case 'refund_failing': {
      const failing = events.slice(0, Math.max(0, events.indexOf(e))).find((x) => x.type === 'refund.failed');
      const since = failing ? ` since ${time(failing.at)} (${relative(failing.at)})` : '';
      return `A refund has kept failing${since}, longer than the service waits before it alerts a person, so the customer may still be charged. The service keeps trying; check the gateway and the Payment below.`;
    }
    case 'capture_on_force_confirmed':
      return `The gateway holds a capture for an order an operator force-confirmed as paid elsewhere: the customer may have paid twice${detail}.`;
    case 'reconciliation_mismatch':
      switch (d.kind) {
        case 'charged_after_release':
          return `The order was released, yet the gateway still holds a charge after its refund watch${detail}.`;
        case 'multiple_captures':
          return `The gateway captured this order more than once${detail}.`;
        case 'no_capture':
          return `The order is confirmed, but the gateway holds no capture for it${detail}.`;
        default:
          return `Reconciliation found the order and the gateway disagree${detail}.`;
      }
    default:
      return `The service flagged it: ${String(d.reason ?? 'no reason recorded')}${detail}.`;
  }
}

/**
 * The notice above an order that needs attention: why, and — when an operator acknowledged it
 * before — that it came back, and why this time.
 */
export function attentionNotice(o: AdminOrder, events: TimelineEvent[]): HTMLElement | null {
  if (!o.needsAttention) return null;
  const raised = [...events].reverse().find((e) => e.type === 'attention.needed');
  const before = raised ? events.slice(0, events.indexOf(raised)) : events;
  const ack = [...before].reverse().find((e) => e.type === 'operator.acknowledge');
  return h(
    'section',
    { class: 'attention', role: 'alert', 'aria-label': 'Needs attention' },
    h('h2', null, ack ? 'Needs attention again' : 'Needs attention'),
    h('p', null, raised ? attentionReason(raised, events) : 'The service flagged this order for a human to look at.', raised ? h('span', { class: 'hint' }, ` Since ${time(raised.at)} (${relative(raised.at)}).`) : null),
    ack
      ? h(
          'p',
          null,
          `It was acknowledged ${relative(ack.at)}${typeof ack.data.operator === 'string' ? ` by ${ack.data.operator}` : ''}`,
          typeof ack.data.reason === 'string' ? ` (“${ack.data.reason}”)` : '',
          ', and came back because the trouble did not go away.',
        )
      : null,
    can('orders:write') ? h('p', { class: 'hint' }, 'When it is dealt with, write a Reason and press Acknowledge.') : null,
  );
}
