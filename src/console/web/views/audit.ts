import { api, ApiError } from '../api.js';
import { h, show, uid } from '../dom.js';
import { relative, shortTime } from '../format.js';
import type { ApiKey, AuditEntry, Operator, Page, Principal } from '../types.js';
import { cell, tableBox } from '../widgets.js';
import { cursorPager, everyPage, pageFailed } from './cursor-pager.js';

const PAGE_SIZE = 50;

/** The actions the audit names by word (the others are the routes of state-changing admin calls). */
const ACTIONS = ['sign_in', 'sign_out', 'api_key.created', 'api_key.revoked', 'operator.created', 'operator.changed'];

/** Routes of state-changing admin calls, offered as the Action filter's suggestions. */
const ROUTES = [
  'POST /admin/orders/{id}/force-confirm',
  'POST /admin/orders/{id}/force-cancel',
  'POST /admin/orders/{id}/retry-now',
  'POST /admin/orders/{id}/acknowledge',
  'POST /admin/orders/bulk-cancel',
  'PUT /admin/inventory/{sku}',
  'PUT /admin/inventory/{sku}/locations/{locationId}',
  'POST /admin/inventory/{sku}/adjustments',
  'POST /admin/inventory/import',
  'PUT /admin/locations/{id}',
  'PUT /admin/webhooks/{name}',
  'DELETE /admin/webhooks/{name}',
];

/** Who, in words: "Ana Ops (operator)", "storefront (API key)", "the admin token". */
export function whoText(p: Principal | null): string {
  if (!p) return 'nobody (refused)';
  if (p.type === 'root') return 'the admin token';
  if (p.type === 'system') return 'the service';
  return `${p.name ?? p.id ?? '?'} (${p.type === 'api_key' ? 'API key' : 'operator'})`;
}

/**
 * The audit log (/console/audit, admins only): who did what and how it ended, newest first, filtered
 * by principal (an operator or a key) and by action; the filters live in the page's URL.
 */
export function auditView(main: HTMLElement): void {
  document.title = 'Audit · TCC operator console';
  const params = new URLSearchParams(location.search);
  const ids = { principal: uid('audit-principal'), action: uid('audit-action'), actions: uid('audit-actions') };
  const wanted = params.get('principal') ?? '';
  const principal = h('select', { id: ids.principal, name: 'principal', onchange: () => apply() }, h('option', { value: '' }, 'Everyone'), wanted ? h('option', { value: wanted, selected: true }, wanted) : null);
  const action = h('input', { id: ids.action, name: 'action', type: 'text', list: ids.actions, maxlength: 200, autocomplete: 'off', spellcheck: 'false', value: params.get('action') ?? '', 'aria-describedby': `${ids.action}-hint` });
  const body = h('tbody', null, h('tr', null, h('td', { colspan: 7, class: 'empty' }, 'Loading…')));
  const message = h('p', { class: 'message', role: 'status' });
  const pager = cursorPager('Audit pages', () => void load());
  const col = (text: string, cls?: string) => h('th', { scope: 'col', class: cls }, text);

  show(
    main,
    h('h1', null, 'Audit'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'audit-heading' },
      h('h2', { id: 'audit-heading', class: 'visually-hidden' }, 'Audit log'),
      h(
        'form',
        { class: 'filters', onsubmit: (e: Event) => (e.preventDefault(), apply()) },
        h('div', { class: 'field' }, h('label', { for: ids.principal }, 'Principal'), principal),
        h(
          'div',
          { class: 'field wide-field' },
          h('label', { for: ids.action }, 'Action'),
          action,
          h('datalist', { id: ids.actions }, [...ACTIONS, ...ROUTES].map((a) => h('option', { value: a }))),
          h('p', { id: `${ids.action}-hint`, class: 'hint' }, 'sign_in, api_key.created, … or a route: POST /admin/orders/{id}/force-cancel'),
        ),
        h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply'), h('button', { type: 'button', onclick: () => ((principal.value = ''), (action.value = ''), apply()) }, 'Clear filters')),
      ),
      h('p', { class: 'hint' }, 'Newest first. Refused sign-ins show the email tried; no secret is ever recorded.'),
      message,
      tableBox(
        'Audit table',
        h(
          'table',
          { class: 'cards audit' },
          h('thead', null, h('tr', null, col('Time (UTC)'), col('Who'), col('Action'), col('Target'), col('Outcome', 'num'), col('Address'), col('Request id'))),
          body,
        ),
      ),
      pager.element,
    ),
  );

  /** The filters as they stand, into the URL (reload and a shared link show the same) and the list from its first page. */
  function apply(): void {
    const q = new URLSearchParams();
    if (principal.value) q.set('principal', principal.value);
    if (action.value.trim()) q.set('action', action.value.trim());
    const s = q.toString();
    history.replaceState(null, '', `/console/audit${s ? `?${s}` : ''}`);
    pager.reset();
    void load();
  }

  /**
   * Every operator and every key to filter by, each list followed to its last page (a shop may have
   * hundreds of keys), by name within its group. Until they arrive the principal in the URL stands
   * as its id.
   */
  async function loadPrincipals(): Promise<void> {
    try {
      const [ops, keys] = await Promise.all([everyPage<Operator>('/admin/operators'), everyPage<ApiKey>('/admin/api-keys')]);
      const byLabel = (a: [string, string], b: [string, string]) => a[1].localeCompare(b[1]);
      const opOptions = ops.map((o): [string, string] => [o.id, `${o.name} <${o.email}>`]).sort(byLabel);
      const keyOptions = keys.map((k): [string, string] => [k.id, `${k.name} (${k.prefix}…)`]).sort(byLabel);
      const current = principal.value;
      const option = ([id, label]: [string, string]) => h('option', { value: id, selected: id === current }, label);
      show(
        principal,
        h('option', { value: '', selected: current === '' }, 'Everyone'),
        h('optgroup', { label: 'Operators' }, opOptions.map(option)),
        h('optgroup', { label: 'API keys' }, keyOptions.map(option)),
        current && !ops.some((o) => o.id === current) && !keys.some((k) => k.id === current) ? h('option', { value: current, selected: true }, current) : null,
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) message.textContent = `The list of principals cannot be loaded: ${(err as Error).message}`;
    }
  }

  function row(e: AuditEntry): HTMLElement {
    const refused = e.outcome >= 400;
    return h(
      'tr',
      null,
      cell('Time (UTC)', { class: 'card-title', title: relative(e.at) }, h('time', { datetime: e.at }, shortTime(e.at))),
      cell('Who', null, whoText(e.principal)),
      cell('Action', { class: 'wrap' }, h('code', null, e.action)),
      cell('Target', { class: e.target ? 'wrap' : 'empty-cell' }, e.target ?? ''),
      cell('Outcome', { class: `num${refused ? ' refused' : ''}` }, refused ? `${e.outcome} refused` : String(e.outcome)),
      cell('Address', { class: e.address ? '' : 'empty-cell' }, e.address ?? ''),
      cell('Request id', { class: e.requestId ? 'wrap' : 'empty-cell' }, e.requestId ? h('code', null, e.requestId) : ''),
    );
  }

  async function load(): Promise<void> {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    const filters = new URLSearchParams(location.search);
    if (filters.get('principal')) q.set('principalId', filters.get('principal')!);
    if (filters.get('action')) q.set('action', filters.get('action')!);
    if (pager.cursor) q.set('cursor', pager.cursor);
    const asked = q.toString();
    try {
      const page = await api<Page<AuditEntry>>('GET', `/admin/audit?${asked}`);
      message.className = 'message';
      message.textContent = '';
      show(body, page.data.length === 0 ? h('tr', null, h('td', { colspan: 7, class: 'empty' }, 'Nothing recorded matches these filters.')) : page.data.map(row));
      pager.loaded(page.nextCursor);
    } catch (err) {
      const say = (m: string) => {
        message.className = 'message error';
        message.textContent = `The audit cannot be loaded: ${m}`;
        show(body);
      };
      if (pageFailed(pager, err, say)) return load();
    }
  }

  void loadPrincipals();
  void load();
}
