import { api, ApiError, can, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { money, orDash, relative, time } from '../format.js';
import { listUrl } from '../lifecycle.js';
import type { Nav } from '../nav.js';
import type { AdminOrder, TimelineEvent } from '../types.js';
import { autoRefresh, copyButton } from '../widgets.js';
import { attentionNotice } from './attention.js';
import { notFoundView } from './not-found.js';
import { timelineItems } from './order-timeline.js';
import { paymentHold } from './payment-hold.js';
import { statusBadge } from './orders-table.js';
import { paymentBlock } from './payment.js';
import { nextStep } from './waiting.js';

interface Action {
  label: string;
  path: string;
  /** The admin API records a reason for it (and refuses the call without one). */
  needsReason: boolean;
  /** Asks "are you sure" naming the order and its amount before it runs. */
  confirm?: string;
  done: string;
}

const FORCE_CONFIRM: Action = { label: 'Force confirm', path: 'force-confirm', needsReason: true, confirm: 'Force-confirm', done: 'Force-confirmed' };
const FORCE_CANCEL: Action = { label: 'Force cancel', path: 'force-cancel', needsReason: true, confirm: 'Force-cancel', done: 'Force-canceled' };
const RETRY_NOW: Action = { label: 'Retry now', path: 'retry-now', needsReason: false, done: 'Retried' };
const ACKNOWLEDGE: Action = { label: 'Acknowledge', path: 'acknowledge', needsReason: true, done: 'Acknowledged' };

/** What the order's state allows: nothing on a terminal order but acknowledging it, no Retry now before a Confirm. */
function actionsFor(o: AdminOrder): Action[] {
  const byState: Record<string, Action[]> = { TRY_SUCCESS: [FORCE_CONFIRM, FORCE_CANCEL], CONFIRM_PENDING: [FORCE_CONFIRM, FORCE_CANCEL, RETRY_NOW] };
  return [...(byState[o.status] ?? []), ...(o.needsAttention ? [ACKNOWLEDGE] : [])];
}

/** One order: what it is, what happened to it, and the operator's actions on it. */
export function orderView(main: HTMLElement, nav: Nav, id: string): void {
  document.title = `Order ${id} · TCC operator console`;
  const details = h('div', { 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));
  const attention = h('div');
  const payment = paymentBlock(id);
  const hold = h('div');
  const timeline = h('ol', { class: 'timeline' });
  const reasonId = uid('reason');
  const reason = h('input', { id: reasonId, type: 'text', name: 'reason', maxlength: 500, autocomplete: 'off', 'aria-describedby': `${reasonId}-hint` });
  const reasonField = h(
    'div',
    { class: 'field' },
    h('label', { for: reasonId }, 'Reason'),
    reason,
    h('p', { id: `${reasonId}-hint`, class: 'hint' }, 'Force confirm, Force cancel and Acknowledge need a reason; it is recorded on the timeline. Retry now takes none.'),
  );
  const confirmBox = h('div');
  const outcome = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const buttons = h('div', { class: 'actions' });
  const actionForm = h('form', { class: 'action-form', onsubmit: (e: Event) => e.preventDefault() }, reasonField, buttons, confirmBox);
  let current: AdminOrder | undefined;
  let events: TimelineEvent[] = [];

  show(
    main,
    h('p', { class: 'crumbs' }, nav.link(listUrl(), '← Orders')),
    h('div', { class: 'title-row' }, h('h1', null, 'Order ', h('code', { class: 'order-id' }, id)), autoRefresh(() => load())),
    attention,
    h('section', { class: 'card', 'aria-labelledby': 'details-heading' }, h('h2', { id: 'details-heading', class: 'visually-hidden' }, 'Details'), details),
    // The evidence before the decision: what the gateway holds and what happened, then the actions.
    h('section', { class: 'card', 'aria-labelledby': 'payment-heading' }, h('h2', { id: 'payment-heading' }, 'Payment'), hold, payment.element),
    h('section', { class: 'card', 'aria-labelledby': 'timeline-heading' }, h('h2', { id: 'timeline-heading' }, 'Timeline'), timeline),
    // Only a role that may change orders is offered the actions (the API refuses the others 403).
    can('orders:write')
      ? h('section', { class: 'card', 'aria-labelledby': 'actions-heading' }, h('h2', { id: 'actions-heading' }, 'Actions'), actionForm, outcome)
      : h('section', { class: 'card', 'aria-labelledby': 'actions-heading' }, h('h2', { id: 'actions-heading' }, 'Actions'), h('p', { class: 'hint' }, 'None for your role: it may look at orders but not change them.')),
  );

  function showOrder(o: AdminOrder): void {
    const changed = current?.updatedAt !== o.updatedAt || current?.status !== o.status;
    current = o;
    details.removeAttribute('aria-busy');
    show(hold, paymentHold(o));
    const row = (label: string, ...value: (Node | string | null)[]) => h('div', { class: 'detail' }, h('dt', null, label), h('dd', null, ...value));
    const when = (iso: string | null) => (iso ? [time(iso), h('span', { class: 'relative' }, ` (${relative(iso)})`)] : ['—']);
    const holding = o.status === 'TRY_SUCCESS' || o.status === 'CONFIRM_PENDING';
    show(
      details,
      h(
        'dl',
        { class: 'details' },
        row('Status', statusBadge(o.status)),
        row('Customer', o.customerId),
        row('Amount', money(o.amountMinor, o.currency)),
        holding ? row('Expires', ...when(o.reservationExpiresAt)) : row('Reservation expiry', time(o.reservationExpiresAt)),
        row('Attempts', String(o.confirmAttempts)),
        o.status === 'CONFIRM_PENDING' && o.lastOutcome ? row('Waiting on', o.lastOutcome.text) : null,
        o.status === 'CONFIRM_PENDING' ? row('Next step', nextStep(o)) : null,
        row('Refund status', orDash(o.refundStatus)),
        row('Needs attention', o.needsAttention ? 'Yes' : 'No'),
        row('Failure reason', orDash(o.failureReason)),
        row('Created', ...when(o.createdAt)),
        row('Updated', ...when(o.updatedAt)),
        row('Order id', h('code', null, o.id), ' ', copyButton(o.id, 'order id')),
        row('Transaction', h('code', null, o.transactionId), ' ', copyButton(o.transactionId, 'transaction id')),
      ),
      h('h3', null, 'Items'),
      h(
        'div',
        { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-label': 'Items table' },
        h(
          'table',
          { class: 'items' },
          h('thead', null, h('tr', null, ['SKU', 'Quantity', 'Unit price', 'Line total', 'Allocations'].map((c) => h('th', { scope: 'col' }, c)))),
          h(
            'tbody',
            null,
            o.items.map((i) =>
              h(
                'tr',
                null,
                h('td', null, nav.link(`/console/inventory/${encodeURIComponent(i.sku)}`, i.sku)),
                h('td', { class: 'num' }, String(i.quantity)),
                h('td', { class: 'num' }, money(i.unitPriceMinor, o.currency)),
                h('td', { class: 'num' }, money(i.unitPriceMinor * i.quantity, o.currency)),
                h('td', null, allocationsOf(i).map((a) => `${a.locationId}: ${a.quantity}`).join(', ') || '—'),
              ),
            ),
          ),
        ),
      ),
    );
    if (changed) showActions(o);
  }

  function showActions(o: AdminOrder): void {
    show(confirmBox);
    const actions = actionsFor(o);
    reasonField.hidden = !actions.some((a) => a.needsReason);
    if (actions.length === 0) {
      show(buttons, h('p', { class: 'hint' }, `None: the order is ${o.status}, which is final.`));
      return;
    }
    show(
      buttons,
      actions.map((a) => h('button', { type: 'button', onclick: () => void ask(a) }, a.label)),
    );
  }

  /** A force action first asks, naming the order and its amount; the others run at once. */
  function ask(a: Action): void {
    outcome.className = 'message';
    outcome.textContent = '';
    const text = reason.value.trim();
    if (a.needsReason && !text) {
      fail(`${a.label} needs a reason: write it in the Reason field.`);
      reason.focus();
      return;
    }
    if (!a.confirm || !current) return void act(a, text);
    const o = current;
    const yes = h('button', { type: 'button', class: 'danger', onclick: () => void act(a, text) }, `Yes, ${a.label.toLowerCase()}`);
    show(
      confirmBox,
      h(
        'div',
        { class: 'confirm', role: 'alertdialog', 'aria-label': `Confirm ${a.label.toLowerCase()}`, 'aria-describedby': `${reasonId}-confirm` },
        h('p', { id: `${reasonId}-confirm` }, `${a.confirm} order `, h('code', null, o.id), ` for ${money(o.amountMinor, o.currency)}? `, payment.note(a === FORCE_CONFIRM ? 'confirm' : 'cancel')),
        h('div', { class: 'actions' }, yes, h('button', { type: 'button', onclick: () => show(confirmBox) }, 'No, keep it')),
      ),
    );
    yes.focus();
  }

  async function act(a: Action, text: string): Promise<void> {
    show(confirmBox);
    for (const b of buttons.querySelectorAll('button')) b.disabled = true;
    try {
      const before = current?.status;
      const o = await api<AdminOrder>('POST', `/admin/orders/${seg(id)}/${a.path}`, a.needsReason ? { reason: text } : undefined);
      current = undefined; // the buttons follow the new state
      showOrder(o);
      reason.value = '';
      outcome.className = 'message ok';
      outcome.textContent = before === o.status ? `${a.done}: the order is still ${o.status}.` : `${a.done}: the order is now ${o.status}.`;
      await Promise.all([loadTimeline(), payment.load(o, true)]);
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

  function showTimeline(): void {
    show(timeline, timelineItems(events));
  }

  async function loadTimeline(): Promise<void> {
    events = (await api<{ data: TimelineEvent[] }>('GET', `/admin/orders/${seg(id)}/events`)).data;
    showTimeline();
    if (current) show(attention, attentionNotice(current, events));
  }

  async function load(): Promise<void> {
    try {
      const o = await api<AdminOrder>('GET', `/admin/orders/${seg(id)}`);
      showOrder(o);
      await Promise.all([loadTimeline(), payment.load(o)]);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      if (err instanceof ApiError && err.status === 404) return notFoundView(main, nav, `There is no order ${id}.`, 'Order not found');
      details.removeAttribute('aria-busy');
      show(details, h('p', { class: 'message error', role: 'alert' }, (err as Error).message));
    }
  }

  void load();
}

/** Where a line's stock is held (the order JSON's `allocations`: location and quantity). */
function allocationsOf(item: object): { locationId: string; quantity: number }[] {
  return (item as { allocations?: { locationId: string; quantity: number }[] }).allocations ?? [];
}
