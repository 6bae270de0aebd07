import { api, ApiError, can, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { BREAKER_TEXT, money, ORDER_STATUSES, relative, shortTime } from '../format.js';
import { rememberList } from '../lifecycle.js';
import type { Nav } from '../nav.js';
import type { AdminOrder, Filters, OrderCounts, OrderPage, Stats } from '../types.js';
import { autoRefresh, cell } from '../widgets.js';
import { bulkCancel } from './bulk-cancel.js';
import { waiting } from './waiting.js';

const PAGE_SIZE = 20;
const SKU = /^[A-Za-z0-9_.:-]{1,64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];
/** The start of an order id, 8 characters or more, as Search takes it. */
const ID_PREFIX = /^[0-9a-f]{8}(?:-?[0-9a-f-]{0,27})$/i;

interface Position {
  page: number;
  cursor: string | null;
}

function filtersOf(q: URLSearchParams): Filters {
  const status = q.get('status') ?? '';
  const older = q.get('olderThan') ?? '';
  const sku = q.get('sku') ?? '';
  return {
    status: (ORDER_STATUSES as readonly string[]).includes(status) ? status : '',
    needsAttention: q.get('needsAttention') === 'true',
    customerId: (q.get('customer') ?? '').slice(0, 128),
    sku: SKU.test(sku) ? sku : '',
    olderThanMinutes: /^\d{1,7}$/.test(older) ? older : '',
    idPrefix: ID_PREFIX.test(q.get('id') ?? '') ? q.get('id')!.toLowerCase() : '',
    // Newest first unless asked: what just went wrong is what an operator opens the list for.
    sort: q.get('sort') === 'oldest' ? 'oldest' : 'newest',
  };
}

function positionOf(q: URLSearchParams): Position {
  const page = Number(q.get('page'));
  const cursor = q.get('cursor');
  return cursor && Number.isInteger(page) && page > 1 ? { page, cursor } : { page: 1, cursor: null };
}

/** The console URL of a list. */
export function listHref(f: Filters, at: Position = { page: 1, cursor: null }): string {
  const q = new URLSearchParams();
  if (f.status) q.set('status', f.status);
  if (f.needsAttention) q.set('needsAttention', 'true');
  if (f.customerId) q.set('customer', f.customerId);
  if (f.sku) q.set('sku', f.sku);
  if (f.olderThanMinutes) q.set('olderThan', f.olderThanMinutes);
  if (f.idPrefix) q.set('id', f.idPrefix);
  if (f.sort === 'oldest') q.set('sort', 'oldest');
  if (at.cursor) {
    q.set('page', String(at.page));
    q.set('cursor', at.cursor);
  }
  const s = q.toString();
  return s ? `/console?${s}` : '/console';
}

/** The admin API's query for the filters (status optional: the counts ask without it). */
function apiQuery(f: Filters, withStatus: boolean): URLSearchParams {
  const q = new URLSearchParams();
  if (withStatus && f.status) q.set('status', f.status);
  if (f.needsAttention) q.set('needsAttention', 'true');
  if (f.customerId) q.set('customerId', f.customerId);
  if (f.sku) q.set('sku', f.sku);
  if (f.olderThanMinutes) q.set('olderThanMinutes', f.olderThanMinutes);
  if (f.idPrefix) q.set('idPrefix', f.idPrefix);
  return q;
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge status-${status.toLowerCase().replace(/_/g, '-')}` }, status);
}

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
    const fresh: Filters = { status: '', needsAttention: false, sku: '', olderThanMinutes: '', customerId: '', idPrefix: '', sort: filters.sort };
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
    if (orders.length === 0) {
      show(body, h('tr', null, h('td', { colspan: 8, class: 'empty' }, 'No orders match these filters.')));
      return;
    }
    show(
      body,
      orders.map((o) => {
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
      }),
    );
  }

  async function loadFigures(): Promise<void> {
    try {
      const s = await api<Stats>('GET', '/admin/stats');
      figures.removeAttribute('aria-busy');
      const empty: Filters = { status: '', needsAttention: false, customerId: '', sku: '', olderThanMinutes: '', idPrefix: '', sort: filters.sort };
      // The whole figure is the link's target (CSS stretches it); its name is the figure's label.
      const figure = (href: string, label: string, value: string, alert: boolean) =>
        h('div', { class: `figure linked${alert ? ' alert' : ''}` }, h('dt', null, nav.link(href, label)), h('dd', null, value));
      show(
        figures,
        h(
          'dl',
          { class: 'figure-list' },
          ORDER_STATUSES.map((st) => figure(listHref({ ...empty, status: st }), st, String(s.ordersByStatus[st] ?? 0), false)),
          figure(listHref({ ...empty, needsAttention: true }), 'Needing attention', String(s.needingAttention), s.needingAttention > 0),
          // The breaker holds back confirms: its figure opens the orders waiting on the gateway.
          figure(listHref({ ...empty, status: 'CONFIRM_PENDING' }), 'Payment breaker', BREAKER_TEXT[s.breaker] ?? s.breaker, s.breaker !== 'closed'),
        ),
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) show(figures, h('p', { class: 'message error' }, (err as Error).message));
    }
  }

  void refresh();
}

/** The filters in force, in a few words: "CONFIRM_PENDING · customer c-ana · newest first". */
function summary(f: Filters): string {
  const parts = [
    f.status,
    f.needsAttention ? 'needs attention' : '',
    f.customerId ? `customer ${f.customerId}` : '',
    f.sku ? `SKU ${f.sku}` : '',
    f.olderThanMinutes ? `older than ${f.olderThanMinutes} min` : '',
    f.idPrefix ? `id ${f.idPrefix}…` : '',
    f.sort === 'oldest' ? 'oldest first' : 'newest first',
  ];
  return parts.filter(Boolean).join(' · ');
}

function filtered(f: Filters): boolean {
  return !!(f.status || f.needsAttention || f.customerId || f.sku || f.olderThanMinutes || f.idPrefix || f.sort === 'oldest');
}

/** The Status select's options, each with its count under the other filters once they are known. */
function statusOptions(selected: string, counts: OrderCounts | undefined): HTMLOptionElement[] {
  const all = counts ? Object.values(counts.byStatus).reduce((a, b) => a + b, 0) : undefined;
  const label = (text: string, n: number | undefined) => (n === undefined ? text : `${text} (${n})`);
  return [
    h('option', { value: '', selected: selected === '' }, label('All statuses', all)),
    ...ORDER_STATUSES.map((s) => h('option', { value: s, selected: s === selected }, label(s, counts?.byStatus[s]))),
  ];
}
