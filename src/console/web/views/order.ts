import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { money, orDash, time } from '../format.js';
import type { Nav } from '../nav.js';
import type { AdminOrder, TimelineEvent } from '../types.js';
import { statusBadge } from './orders.js';

interface Action {
  label: string;
  path: string;
  /** The admin API records a reason for it (and refuses the call without one). */
  needsReason: boolean;
  done: string;
}

const ACTIONS: Action[] = [
  { label: 'Force confirm', path: 'force-confirm', needsReason: true, done: 'Force-confirmed' },
  { label: 'Force cancel', path: 'force-cancel', needsReason: true, done: 'Force-canceled' },
  { label: 'Retry now', path: 'retry-now', needsReason: false, done: 'Retried' },
];
const ACKNOWLEDGE: Action = { label: 'Acknowledge', path: 'acknowledge', needsReason: true, done: 'Acknowledged' };

/** One order: what it is, what happened to it, and the operator's actions on it. */
export function orderView(main: HTMLElement, nav: Nav, id: string): void {
  document.title = 'Order · TCC operator console';
  const details = h('div', { 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));
  const timeline = h('ol', { class: 'timeline' });
  const reasonId = uid('reason');
  const reason = h('input', { id: reasonId, type: 'text', name: 'reason', maxlength: 500, autocomplete: 'off', 'aria-describedby': `${reasonId}-hint` });
  const outcome = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const buttons = h('div', { class: 'actions' });
  let current: AdminOrder | undefined;

  show(
    main,
    h('p', { class: 'crumbs' }, nav.link('/console', '← Orders')),
    h('h1', null, 'Order ', h('code', { class: 'order-id' }, id)),
    h('section', { class: 'card', 'aria-labelledby': 'details-heading' }, h('h2', { id: 'details-heading', class: 'visually-hidden' }, 'Details'), details),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'actions-heading' },
      h('h2', { id: 'actions-heading' }, 'Actions'),
      h(
        'form',
        { class: 'action-form', onsubmit: (e: Event) => e.preventDefault() },
        h('div', { class: 'field' }, h('label', { for: reasonId }, 'Reason'), reason, h('p', { id: `${reasonId}-hint`, class: 'hint' }, 'Force confirm, Force cancel and Acknowledge need a reason; it is recorded on the timeline. Retry now takes none.')),
        buttons,
      ),
      outcome,
    ),
    h('section', { class: 'card', 'aria-labelledby': 'timeline-heading' }, h('h2', { id: 'timeline-heading' }, 'Timeline'), timeline),
  );

  function showOrder(o: AdminOrder): void {
    current = o;
    details.removeAttribute('aria-busy');
    const row = (label: string, ...value: (Node | string)[]) => h('div', { class: 'detail' }, h('dt', null, label), h('dd', null, ...value));
    show(
      details,
      h(
        'dl',
        { class: 'details' },
        row('Status', statusBadge(o.status)),
        row('Customer', o.customerId),
        row('Amount', money(o.amountMinor, o.currency)),
        row('Expires', time(o.reservationExpiresAt)),
        row('Attempts', String(o.confirmAttempts)),
        row('Refund status', orDash(o.refundStatus)),
        row('Needs attention', o.needsAttention ? 'Yes' : 'No'),
        row('Next action', time(o.nextActionAt)),
        row('Payment', orDash(o.paymentId)),
        row('Failure reason', orDash(o.failureReason)),
        row('Created', time(o.createdAt)),
        row('Updated', time(o.updatedAt)),
        row('Transaction', h('code', null, o.transactionId)),
      ),
      h('h3', null, 'Items'),
      h(
        'table',
        { class: 'items' },
        h('thead', null, h('tr', null, ['SKU', 'Quantity', 'Unit price', 'Line total'].map((c) => h('th', { scope: 'col' }, c)))),
        h(
          'tbody',
          null,
          o.items.map((i) =>
            h(
              'tr',
              null,
              h('td', null, nav.link(`/console/inventory?sku=${encodeURIComponent(i.sku)}`, i.sku)),
              h('td', { class: 'num' }, String(i.quantity)),
              h('td', { class: 'num' }, money(i.unitPriceMinor, o.currency)),
              h('td', { class: 'num' }, money(i.unitPriceMinor * i.quantity, o.currency)),
            ),
          ),
        ),
      ),
    );
    show(buttons, [...ACTIONS, ...(o.needsAttention ? [ACKNOWLEDGE] : [])].map((a) => h('button', { type: 'button', onclick: () => void act(a) }, a.label)));
  }

  function showTimeline(events: TimelineEvent[]): void {
    if (events.length === 0) {
      show(timeline, h('li', { class: 'hint' }, 'No events.'));
      return;
    }
    show(
      timeline,
      events.map((e) =>
        h(
          'li',
          null,
          h('time', { datetime: e.at }, time(e.at)),
          h('span', { class: 'event-type' }, e.type),
          Object.keys(e.data ?? {}).length ? h('span', { class: 'event-data' }, describe(e.data)) : null,
        ),
      ),
    );
  }

  async function act(a: Action): Promise<void> {
    outcome.className = 'message';
    outcome.textContent = '';
    const text = reason.value.trim();
    if (a.needsReason && !text) {
      fail(`${a.label} needs a reason: write it in the Reason field.`);
      reason.focus();
      return;
    }
    for (const b of buttons.querySelectorAll('button')) b.disabled = true;
    try {
      const o = await api<AdminOrder>('POST', `/admin/orders/${seg(id)}/${a.path}`, a.needsReason ? { reason: text } : undefined);
      const before = current?.status;
      showOrder(o);
      reason.value = '';
      outcome.className = 'message ok';
      outcome.textContent = before === o.status ? `${a.done}: the order is still ${o.status}.` : `${a.done}: the order is now ${o.status}.`;
      await loadTimeline();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) fail(`${a.label} refused: ${(err as Error).message}`);
    } finally {
      for (const b of buttons.querySelectorAll('button')) b.disabled = false;
    }
  }

  function fail(text: string): void {
    outcome.className = 'message error';
    outcome.textContent = text;
  }

  async function loadTimeline(): Promise<void> {
    const events = await api<{ data: TimelineEvent[] }>('GET', `/admin/orders/${seg(id)}/events`);
    showTimeline(events.data);
  }

  async function load(): Promise<void> {
    try {
      showOrder(await api<AdminOrder>('GET', `/admin/orders/${seg(id)}`));
      await loadTimeline();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      details.removeAttribute('aria-busy');
      const text = err instanceof ApiError && err.status === 404 ? 'There is no order with this id.' : (err as Error).message;
      show(details, h('p', { class: 'message error', role: 'alert' }, text));
      show(buttons);
    }
  }

  void load();
}

/** An event's data as "key: value" pairs, one line. */
function describe(data: Record<string, unknown>): string {
  return Object.entries(data)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');
}
