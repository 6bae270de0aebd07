import { h } from '../dom.js';
import { relative, time } from '../format.js';
import type { TimelineEvent } from '../types.js';
import { PAYMENT_HOLD_EVENTS } from './payment-hold.js';

/** An order's timeline, rendered: each event in words with its own name beside it, its data in words. */
export function timelineItems(events: TimelineEvent[]): HTMLElement | HTMLElement[] {
  if (events.length === 0) return h('li', { class: 'hint' }, 'No events.');
  return events.map((e) =>
    h(
      'li',
      null,
      h('time', { datetime: e.at }, time(e.at), h('span', { class: 'relative' }, ` · ${relative(e.at)}`)),
      h('span', { class: 'event-title' }, EVENT_TITLES[e.type] ?? e.type),
      h('code', { class: 'event-type' }, e.type),
      Object.keys(e.data ?? {}).length ? h('span', { class: 'event-data' }, describe(e.data)) : null,
    ),
  );
}

/** What each timeline event means, in words; the event's own name stays beside it (logs and the API use it). */
const EVENT_TITLES: Record<string, string> = {
  'status.changed': 'Status changed',
  'payment.charge': 'Payment charge sent',
  'payment.lookup': 'Payment looked up at the gateway',
  'payment.skipped': 'No charge needed',
  'payment.breaker_rejected': 'Charge not sent: the payment breaker is open',
  'confirm.retry_scheduled': 'Confirm retry scheduled',
  'refund.owed': 'Refund owed',
  'refund.succeeded': 'Refund succeeded',
  'refund.failed': 'Refund failed',
  'reservation.extended': 'Reservation extended',
  'attention.needed': 'Needs attention',
  'operator.force_confirm': 'Operator forced Confirm',
  'operator.force_cancel': 'Operator forced Cancel',
  'operator.acknowledge': 'Operator acknowledged',
  'operator.retry_now': 'Operator asked to retry now',
  ...PAYMENT_HOLD_EVENTS,
};

/** A duration in words: "12 min", "45 s", "2 h 5 min". */
function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 1) return `${Math.round(ms)} ms`;
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
}

/** An event's data as "key: value" pairs; durations and allocations in words, not raw numbers and JSON. */
function describe(data: Record<string, unknown>): string {
  return Object.entries(data)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => {
      if (k === 'inMs' && typeof v === 'number') return `runs after: ${duration(v)}`;
      if (k.endsWith('Ms') && typeof v === 'number') return `${k.slice(0, -2)}: ${duration(v)}`;
      if (k === 'allocations' && Array.isArray(v)) {
        const parts = (v as { sku?: string; locationId?: string; quantity?: number }[]).map((a) => `${a.sku ? `${a.sku} ` : ''}${a.quantity} at ${a.locationId}`);
        return `allocations: ${parts.join(', ')}`;
      }
      return `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`;
    })
    .join(' · ');
}
