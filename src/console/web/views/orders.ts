import { api, ApiError, can, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { rememberList } from '../lifecycle.js';
import type { Nav } from '../nav.js';
import type { AdminOrder, Filters, OrderCounts, OrderPage, Stats } from '../types.js';
import { autoRefresh } from '../widgets.js';
import { bulkCancel } from './bulk-cancel.js';
import { apiQuery, filtered, filtersOf, ID_PREFIX, listHref, positionOf, SKU, summary, unfiltered, UUID } from './orders-query.js';
import { figureList, orderRows, statusOptions } from './orders-table.js';

const PAGE_SIZE = 20;

/** The orders list with the figures at a glance above it; everything it shows comes from its URL. */
export function ordersView(main: HTMLElement, nav: Nav): void {
  document.title = 'Orders · TCC operator console';
  const params = new URLSearchParams(location.search);
  const filters = filtersOf(params);
  const at = positionOf(params);
  /** Cursors of the pages before this one, as this tab walked them (history.state keeps them across reloads). */
  const trail: (string | null)[] = Array.isArray((history.state as { trail?: unknown } | null)?.trail) ? (history.state as { trail: (string | null)[] }).trail : [];
  rememberList(location.pathname + location.search);

  const ids = { status: uid('status'), attention: uid('attention'), customer: uid('customer'), sku: uid('sku'), older: uid('older'), sort: uid('sort'), search: uid('search') };
  const statusSelect = h('select', { id: ids.status, name: 'status', onchange: () => apply() }, statusOptions(filters.status, undefined));
  const attention = h('input', { id: ids.attention, type: 'checkbox', name: 'needsAttention', checked: filters.needsAttention, onchange: () => apply() });
  const customer = h('input', { id: ids.customer, type: 'text', name: 'customer', value: filters.customerId, maxlength: 128, autocomplete: 'off' });
  const sku = h('input', { id: ids.sku, type: 'text', name: 'sku', value: filters.sku, maxlength: 64, autocomplete: 'off', spellcheck: 'false' });
  const older = h('input', { id: ids.older, type: 'number', name: 'olderThan', value: filters.olderThanMinutes, min: 0, max: 9_999_999, step: 1, inputmode: 'numeric' });
  const sort = h(
    'select',
    { id: ids.sort, name: 'sort', onchange: () => apply() },
    h('option', { value: 'newest', selected: filters.sort === 'newest' }, 'Newest first'),
    h('option', { value: 'oldest', selected: filters.sort === 'oldest' }, 'Oldest first'),
  );
  const search = h('input', { id: ids.search, type: 'search', name: 'search', maxlength: 128, autocomplete: 'off', spellcheck: 'false', placeholder: 'order id, its first 8 characters, or a customer' });
  const figures = h('div', { class: 'figures', 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));
  const total = h('p', { class: 'total', role: 'status' });
  const body = h('tbody');
  const message = h('p', { class: 'message error', role: 'alert' });
  const prev = h('button', { type: 'button', onclick: () => previous() }, 'Previous page');
  const next = h('button', { type: 'button' }, 'Next page');
  const where = h('span', { class: 'page-number' }, `Page ${at.page}`);
  const bulk = h('div');
  const field = (id: string, label: string, input: HTMLElement) => h('div', { class: 'field' }, h('label', { for: id }, label), input);

  show(
    main,
    h('div', { class: 'title-row' }, h('h1', null, 'Orders'), h('div', { class: 'actions' }, autoRefresh(() => refresh()), h('button', { type: 'button', onclick: () => void refresh() }, 'Refresh'))),
    h('section', { class: 'card', 'aria-labelledby': 'figures-heading' }, h('h2', { id: 'figures-heading' }, 'Figures at a glance'), figures),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'list-heading' },
      h('h2', { id: 'list-heading', class: 'visually-hidden' }, 'Order list'),
      h(
        'form',
        { class: 'search-form', role: 'search', onsubmit: (e: Event) => void find(e) },
        field(ids.search, 'Search', search),
        h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search')),
      ),
      // On a phone the filters fold away under their summary, so the list is on the first screen.
      h(
        'details',
        { class: 'filter-box', open: !matchMedia('(max-width: 640px)').matches },
        h('summary', null, 'Filters', h('span', { class: 'hint' }, ` ${summary(filters)}`)),
        h(
          'form',
          { class: 'filters', onsubmit: (e: Event) => (e.preventDefault(), apply()) },
          field(ids.status, 'Status', statusSelect),
          field(ids.customer, 'Customer', customer),
          field(ids.sku, 'SKU', sku),
          field(ids.older, 'Older than (minutes)', older),
          field(ids.sort, 'Sort', sort),
          h('div', { class: 'field inline check' }, attention, h('label', { for: ids.attention }, 'Needs attention')),
          h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply'), filtered(filters) ? nav.link('/console', 'Clear filters') : null),
        ),
      ),
      h('div', { class: 'list-head' }, total, can('orders:write') ? h('button', { type: 'button', onclick: () => bulkCancel(bulk, filters, () => void refresh()) }, 'Cancel matching') : null),
      bulk,
      h(
        'div',
        { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-label': 'Orders table' },
        h(
          'table',
          { class: 'orders cards' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              [['Order'], ['Created (UTC)'], ['Status'], ['Customer'], ['Amount', 'num'], ['Waiting on'], ['Expires (UTC)'], ['Attempts', 'num']].map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)),
            ),
          ),
          body,
        ),
      ),
      h('nav', { class: 'pager', 'aria-label': 'Pages' }, prev, where, next),
      message,
    ),
  );
  prev.disabled = at.page === 1;
  next.disabled = true;

  /**
   * A select or the checkbox changed, or Apply (Enter in a text field): the first page of the new
   * list, as a new history entry (Back undoes it). Text fields wait for Apply, so typing never
   * reloads the list under the operator's hands.
   */
  function apply(): void {
    const older_ = older.value.trim();
    const sku_ = sku.value.trim();
    const f: Filters = {
      status: statusSelect.value,
      needsAttention: attention.checked,
      customerId: customer.value.trim().slice(0, 128),
      sku: sku_,
      olderThanMinutes: older_,
      idPrefix: filters.idPrefix,
      sort: sort.value === 'oldest' ? 'oldest' : 'newest',
    };
    if (sku_ && !SKU.test(sku_)) return fail('A SKU is 1-64 characters of letters, digits and _ . : -');
    if (older_ && !/^\d{1,7}$/.test(older_)) return fail('Older than (minutes) must be a whole number from 0 to 9999999.');
    nav.push(listHref(f), { trail: [] });
  }

  function previous(): void {
    if (at.page <= 1) return;
    const cursor = trail[trail.length - 1] ?? null;
    const page = cursor ? at.page - 1 : 1; // a shared link has no trail: back to the first page
    nav.push(listHref(filters, { page, cursor }), { trail: trail.slice(0, -1) });
  }

  function fail(text: string): void {
    message.textContent = text;
  }

  /**
   * Search: an order id or transaction id opens that order; the start of one (8 characters or
   * more) lists the orders whose id starts so; anything else, or a start no order has, filters by
   * customer.
   */
  async function find(e: Event): Promise<void> {
    e.preventDefault();
    const text = search.value.trim();
    if (!text) return;
    const uuid = /^tcc-/.test(text) ? text.slice(4) : text;
    const fresh = unfiltered(filters.sort);
    if (UUID.test(uuid)) {
      try {
        const o = await api<AdminOrder>('GET', `/admin/orders/${seg(uuid)}`);
        if (o.id === text || o.transactionId === text) {
          nav.go(`/console/orders/${o.id}`);
          return;
        }
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 404)) return fail((err as Error).message);
      }
    } else if (ID_PREFIX.test(uuid)) {
      try {
        const found = await api<OrderPage>('GET', `/admin/orders?idPrefix=${encodeURIComponent(uuid)}&limit=1`);
        if (found.data.length > 0) return void nav.push(listHref({ ...fresh, idPrefix: uuid.toLowerCase() }), { trail: [] });
      } catch (err) {
        // Not the start of an id after all (a dash out of place): a customer, then.
        if (!(err instanceof ApiError && err.status === 400)) return fail((err as Error).message);
      }
    }
    nav.push(listHref({ ...fresh, customerId: text.slice(0, 128) }), { trail: [] });
  }

  async function refresh(): Promise<void> {
    await Promise.all([loadFigures(), loadCounts(), loadPage()]);
  }

  async function loadPage(): Promise<void> {
    const q = apiQuery(filters, true);
    q.set('limit', String(PAGE_SIZE));
    q.set('sort', filters.sort);
    if (at.cursor) q.set('cursor', at.cursor);
    try {
      const result = await api<OrderPage>('GET', `/admin/orders?${q}`);
      message.textContent = '';
      showRows(result.data);
      const nextCursor = result.nextCursor;
      next.disabled = !nextCursor;
      next.onclick = nextCursor
        ? () => nav.push(listHref(filters, { page: at.page + 1, cursor: nextCursor }), { trail: [...trail, at.cursor] })
        : null;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      // A stale cursor (the service's token changed): the first page instead.
      if (err instanceof ApiError && err.status === 400 && at.cursor) return void nav.go(listHref(filters));
      fail((err as Error).message);
    }
  }

  async function loadCounts(): Promise<void> {
    try {
      const c = await api<OrderCounts>('GET', `/admin/orders/counts?${apiQuery(filters, true)}`);
      total.textContent = `${c.total} ${c.total === 1 ? 'order' : 'orders'}${filters.idPrefix ? ` whose id starts with ${filters.idPrefix}` : ''}`;
      const selected = statusSelect.value;
      show(statusSelect, statusOptions(selected, c));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) total.textContent = '';
    }
  }

  function showRows(orders: AdminOrder[]): void {
    show(body, orderRows(orders, nav));
  }

  async function loadFigures(): Promise<void> {
    try {
      const s = await api<Stats>('GET', '/admin/stats');
      figures.removeAttribute('aria-busy');
      show(figures, figureList(s, filters.sort, nav));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) show(figures, h('p', { class: 'message error' }, (err as Error).message));
    }
  }

  void refresh();
}

