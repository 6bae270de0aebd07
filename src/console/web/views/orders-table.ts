import { h } from '../dom.js';
import { BREAKER_TEXT, money, ORDER_STATUSES, relative, shortTime } from '../format.js';
import type { Nav } from '../nav.js';
import type { AdminOrder, Filters, OrderCounts, Stats } from '../types.js';
import { cell } from '../widgets.js';
import { listHref, unfiltered } from './orders-query.js';
import { waiting } from './waiting.js';

/** The orders list's renderers: its rows, the status badge and select, the figures at a glance. */
const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];

/** An order status as a colored badge. */
export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge status-${status.toLowerCase().replace(/_/g, '-')}` }, status);
}

/** The Status select's options, each with its count under the other filters once they are known. */
export function statusOptions(selected: string, counts: OrderCounts | undefined): HTMLOptionElement[] {
  const all = counts ? Object.values(counts.byStatus).reduce((a, b) => a + b, 0) : undefined;
  const label = (text: string, n: number | undefined) => (n === undefined ? text : `${text} (${n})`);
  return [
    h('option', { value: '', selected: selected === '' }, label('All statuses', all)),
    ...ORDER_STATUSES.map((s) => h('option', { value: s, selected: s === selected }, label(s, counts?.byStatus[s]))),
  ];
}

/** The list's rows (one line saying so when none match). */
export function orderRows(orders: AdminOrder[], nav: Nav): HTMLElement | HTMLElement[] {
  if (orders.length === 0) return h('tr', null, h('td', { colspan: 8, class: 'empty' }, 'No orders match these filters.'));
  return orders.map((o) => {
    const holding = HOLDING.includes(o.status);
    return h(
      'tr',
      null,
      cell('Order', { class: 'card-title' }, nav.link(`/console/orders/${o.id}`, h('code', null, o.id)), o.needsAttention ? h('span', { class: 'flag', title: 'Needs attention' }, ' needs attention') : null),
      cell('Created (UTC)', { title: relative(o.createdAt) }, shortTime(o.createdAt)),
      cell('Status', null, statusBadge(o.status)),
      cell('Customer', null, o.customerId),
      cell('Amount', { class: 'num' }, money(o.amountMinor, o.currency)),
      cell('Waiting on', { class: o.status === 'CONFIRM_PENDING' ? 'waiting' : 'empty-cell' }, waiting(o)),
      // A finished order expires no more: its reservation is gone.
      cell('Expires (UTC)', { title: holding ? relative(o.reservationExpiresAt) : '', class: holding ? '' : 'empty-cell' }, holding ? shortTime(o.reservationExpiresAt) : ''),
      cell('Attempts', { class: 'num' }, String(o.confirmAttempts)),
    );
  });
}

/** The figures at a glance, each a link to the list it counts (under the list's sort). */
export function figureList(s: Stats, sort: Filters['sort'], nav: Nav): HTMLElement {
  const empty = unfiltered(sort);
  // The whole figure is the link's target (CSS stretches it); its name is the figure's label.
  const figure = (href: string, label: string, value: string, alert: boolean) =>
    h('div', { class: `figure linked${alert ? ' alert' : ''}` }, h('dt', null, nav.link(href, label)), h('dd', null, value));
  return h(
    'dl',
    { class: 'figure-list' },
    ORDER_STATUSES.map((st) => figure(listHref({ ...empty, status: st }), st, String(s.ordersByStatus[st] ?? 0), false)),
    figure(listHref({ ...empty, needsAttention: true }), 'Needing attention', String(s.needingAttention), s.needingAttention > 0),
    // The breaker holds back confirms: its figure opens the orders waiting on the gateway.
    figure(listHref({ ...empty, status: 'CONFIRM_PENDING' }), 'Payment breaker', BREAKER_TEXT[s.breaker] ?? s.breaker, s.breaker !== 'closed'),
  );
}
