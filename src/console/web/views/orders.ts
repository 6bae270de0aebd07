import { api, ApiError } from '../api.js';
import { h, show, uid } from '../dom.js';
import { BREAKER_TEXT, money, ORDER_STATUSES, shortTime } from '../format.js';
import type { Nav } from '../nav.js';
import type { AdminOrder, OrderPage, Stats } from '../types.js';

const PAGE_SIZE = 20;

/** Filters live in the page's query string, so a reload or a shared link shows the same list. */
interface Filters {
  status: string;
  needsAttention: boolean;
}

function filtersOf(search: string): Filters {
  const q = new URLSearchParams(search);
  const status = q.get('status') ?? '';
  return { status: (ORDER_STATUSES as readonly string[]).includes(status) ? status : '', needsAttention: q.get('needsAttention') === 'true' };
}

function searchOf(f: Filters): string {
  const q = new URLSearchParams();
  if (f.status) q.set('status', f.status);
  if (f.needsAttention) q.set('needsAttention', 'true');
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge status-${status.toLowerCase().replace(/_/g, '-')}` }, status);
}

/** The orders list (oldest first, as the admin API pages it) with the figures at a glance above it. */
export function ordersView(main: HTMLElement, nav: Nav): void {
  document.title = 'Orders · TCC operator console';
  const filters = filtersOf(location.search);
  const cursors: (string | null)[] = [null]; // cursors[i] opens page i+1
  let page = 0;

  const statusId = uid('status');
  const attentionId = uid('attention');
  const statusSelect = h(
    'select',
    { id: statusId, name: 'status', onchange: () => refilter() },
    h('option', { value: '' }, 'All statuses'),
    ORDER_STATUSES.map((s) => h('option', { value: s, selected: s === filters.status }, s)),
  );
  const attention = h('input', { id: attentionId, type: 'checkbox', name: 'needsAttention', checked: filters.needsAttention, onchange: () => refilter() });
  const figures = h('div', { class: 'figures', 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));
  const body = h('tbody');
  const message = h('p', { class: 'message', role: 'status' });
  const prev = h('button', { type: 'button', onclick: () => go(page - 1) }, 'Previous page');
  const next = h('button', { type: 'button', onclick: () => go(page + 1) }, 'Next page');
  const where = h('span', { class: 'page-number' });

  show(
    main,
    h('div', { class: 'title-row' }, h('h1', null, 'Orders'), h('button', { type: 'button', onclick: () => reload() }, 'Refresh')),
    h('section', { class: 'card', 'aria-labelledby': 'figures-heading' }, h('h2', { id: 'figures-heading' }, 'Figures at a glance'), figures),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'list-heading' },
      h('h2', { id: 'list-heading', class: 'visually-hidden' }, 'Order list'),
      h(
        'form',
        { class: 'filters', onsubmit: (e: Event) => e.preventDefault() },
        h('div', { class: 'field inline' }, h('label', { for: statusId }, 'Status'), statusSelect),
        h('div', { class: 'field inline check' }, attention, h('label', { for: attentionId }, 'Needs attention')),
      ),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'orders' },
          h('thead', null, h('tr', null, [['Order'], ['Created (UTC)'], ['Status'], ['Customer'], ['Amount', 'num'], ['Expires (UTC)'], ['Attempts', 'num']].map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
          body,
        ),
      ),
      h('nav', { class: 'pager', 'aria-label': 'Pages' }, prev, where, next),
      message,
    ),
  );

  function refilter(): void {
    filters.status = statusSelect.value;
    filters.needsAttention = attention.checked;
    history.replaceState(null, '', `/console${searchOf(filters)}`);
    cursors.length = 1;
    void go(0);
  }

  function reload(): void {
    void loadFigures();
    void go(page);
  }

  async function go(to: number): Promise<void> {
    if (to < 0 || to >= cursors.length) return;
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (filters.status) q.set('status', filters.status);
    if (filters.needsAttention) q.set('needsAttention', 'true');
    const cursor = cursors[to];
    if (cursor) q.set('cursor', cursor);
    prev.disabled = next.disabled = true;
    message.textContent = '';
    try {
      const result = await api<OrderPage>('GET', `/admin/orders?${q}`);
      page = to;
      cursors.length = to + 1;
      if (result.nextCursor) cursors.push(result.nextCursor);
      showRows(result.data);
      prev.disabled = page === 0;
      next.disabled = !result.nextCursor;
      where.textContent = `Page ${page + 1}`;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) message.textContent = (err as Error).message;
    }
  }

  function showRows(orders: AdminOrder[]): void {
    if (orders.length === 0) {
      show(body, h('tr', null, h('td', { colspan: 7, class: 'empty' }, 'No orders match these filters.')));
      return;
    }
    show(
      body,
      orders.map((o) =>
        h(
          'tr',
          null,
          h('td', null, nav.link(`/console/orders/${o.id}`, h('code', null, o.id)), o.needsAttention ? h('span', { class: 'flag', title: 'Needs attention' }, ' needs attention') : null),
          h('td', null, shortTime(o.createdAt)),
          h('td', null, statusBadge(o.status)),
          h('td', null, o.customerId),
          h('td', { class: 'num' }, money(o.amountMinor, o.currency)),
          h('td', null, shortTime(o.reservationExpiresAt)),
          h('td', { class: 'num' }, String(o.confirmAttempts)),
        ),
      ),
    );
  }

  async function loadFigures(): Promise<void> {
    try {
      const s = await api<Stats>('GET', '/admin/stats');
      figures.removeAttribute('aria-busy');
      show(
        figures,
        h(
          'dl',
          { class: 'figure-list' },
          ORDER_STATUSES.map((st) => h('div', { class: 'figure' }, h('dt', null, st), h('dd', null, String(s.ordersByStatus[st] ?? 0)))),
          h('div', { class: `figure${s.needingAttention > 0 ? ' alert' : ''}` }, h('dt', null, 'Needing attention'), h('dd', null, String(s.needingAttention))),
          h('div', { class: `figure${s.breaker === 'closed' ? '' : ' alert'}` }, h('dt', null, 'Payment breaker'), h('dd', null, BREAKER_TEXT[s.breaker] ?? s.breaker)),
        ),
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) show(figures, h('p', { class: 'message error' }, (err as Error).message));
    }
  }

  reload();
}
