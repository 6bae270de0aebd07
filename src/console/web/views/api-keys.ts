import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { relative, shortTime } from '../format.js';
import type { ApiKey, Page } from '../types.js';
import { cell, copyButton, tableBox } from '../widgets.js';
import { cursorPager, errorRow, pageFailed } from './cursor-pager.js';

/** Each scope a key may hold, and what it opens (API.md, "Identity and access"). */
export const SCOPE_TEXT: [string, string][] = [
  ['checkout', 'the checkout API, when CHECKOUT_AUTH=required'],
  ['participant', 'the TCC participant API (/tcc/*)'],
  ['orders:read', 'read orders, their timelines and payments'],
  ['orders:write', 'force confirm and cancel, retry now, acknowledge, bulk cancel'],
  ['inventory:read', 'read stock, movements and locations'],
  ['inventory:write', 'set and adjust stock, import, change locations'],
  ['webhooks', 'webhook endpoints and their deliveries'],
  ['admin', 'everything, keys, operators and the audit included'],
];

const PAGE_SIZE = 50;

/** A key's state in a word. */
function state(k: ApiKey, now = Date.now()): string {
  if (k.revokedAt) return 'Revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= now) return 'Expired';
  return 'Active';
}

/**
 * API keys (/console/api-keys, admins only): the list (never a key itself), a form that makes one
 * — its secret shown once, with a copy button — and revoking one after a confirmation.
 */
export function apiKeysView(main: HTMLElement): void {
  document.title = 'API keys · TCC operator console';
  const ids = { name: uid('key-name'), expires: uid('key-expires'), scopes: uid('key-scopes') };
  const name = h('input', { id: ids.name, name: 'name', type: 'text', maxlength: 100, autocomplete: 'off', 'aria-describedby': `${ids.name}-hint` });
  const expires = h('input', { id: ids.expires, name: 'expiresOn', type: 'date', 'aria-describedby': `${ids.expires}-hint` });
  const boxes = SCOPE_TEXT.map(([scope, text]) => {
    const id = uid('scope');
    const box = h('input', { id, type: 'checkbox', name: 'scopes', value: scope });
    return { scope, box, element: h('div', { class: 'field inline check scope' }, box, h('label', { for: id }, h('code', null, scope), ` — ${text}`)) };
  });
  const make = h('button', { type: 'submit', class: 'primary' }, 'Make key');
  const formMessage = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const made = h('div');
  const listMessage = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const confirmBox = h('div');
  const body = h('tbody', null, h('tr', null, h('td', { colspan: 8, class: 'empty' }, 'Loading…')));
  const pager = cursorPager('Key pages', () => void load());
  const col = (text: string, cls?: string) => h('th', { scope: 'col', class: cls }, text);

  show(
    main,
    h('h1', null, 'API keys'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'make-key-heading' },
      h('h2', { id: 'make-key-heading' }, 'Make a key'),
      h('p', { class: 'hint' }, 'A key is for a program (a storefront, a stock feed, a coordinator); people sign in as operators. Give a key only the scopes its program needs.'),
      h(
        'form',
        { class: 'key-form', novalidate: true, onsubmit: (e: Event) => void submit(e) },
        h('div', { class: 'field' }, h('label', { for: ids.name }, 'Name'), name, h('p', { id: `${ids.name}-hint`, class: 'hint' }, 'Who uses it: "storefront", "stock feed". 1-100 characters.')),
        h('fieldset', { class: 'scopes', 'aria-describedby': `${ids.scopes}-hint` }, h('legend', null, 'Scopes'), h('p', { id: `${ids.scopes}-hint`, class: 'hint' }, 'At least one.'), boxes.map((b) => b.element)),
        h(
          'div',
          { class: 'field' },
          h('label', { for: ids.expires }, 'Expires on ', h('span', { class: 'optional' }, '(optional)')),
          expires,
          h('p', { id: `${ids.expires}-hint`, class: 'hint' }, 'The key stops working at the end of that day (UTC). Empty: it works until revoked.'),
        ),
        h('div', { class: 'actions' }, make),
      ),
      formMessage,
      made,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'keys-heading' },
      h('h2', { id: 'keys-heading' }, 'Keys'),
      h('p', { class: 'hint' }, 'Oldest first. A key is never shown again after it is made: only its first characters, to tell keys apart.'),
      listMessage,
      confirmBox,
      tableBox(
        'API keys table',
        h(
          'table',
          { class: 'cards' },
          h('thead', null, h('tr', null, col('Name'), col('Prefix'), col('Scopes'), col('State'), col('Created (UTC)'), col('Expires (UTC)'), col('Last used'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Revoke')))),
          body,
        ),
      ),
      pager.element,
    ),
  );

  function fail(el: HTMLElement, text: string): void {
    el.className = 'message error';
    el.setAttribute('role', 'alert');
    el.textContent = text;
  }

  function ok(el: HTMLElement, text: string): void {
    el.className = 'message ok';
    el.setAttribute('role', 'status');
    el.textContent = text;
  }

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    formMessage.textContent = '';
    show(made);
    const n = name.value.trim();
    const scopes = boxes.filter((b) => b.box.checked).map((b) => b.scope);
    const day = expires.value;
    if (n.length < 1 || n.length > 100) {
      fail(formMessage, 'Not made: Name must be 1-100 characters.');
      return name.focus();
    }
    if (scopes.length === 0) {
      fail(formMessage, 'Not made: choose at least one scope.');
      return boxes[0].box.focus();
    }
    const expiresAt = day ? `${day}T23:59:59.999Z` : undefined;
    if (expiresAt && !(Date.parse(expiresAt) > Date.now())) {
      fail(formMessage, 'Not made: Expires on must be today or later.');
      return expires.focus();
    }
    make.disabled = true;
    try {
      const key = await api<ApiKey & { key: string }>('POST', '/admin/api-keys', { name: n, scopes, ...(expiresAt ? { expiresAt } : {}) });
      name.value = '';
      expires.value = '';
      for (const b of boxes) b.box.checked = false;
      showSecret(key);
      pager.reset();
      await load();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) fail(formMessage, `Not made: ${(err as Error).message}`);
    } finally {
      make.disabled = false;
    }
  }

  /** The new key, once: copy it now, it is not shown again (the service keeps only its hash). */
  function showSecret(key: ApiKey & { key: string }): void {
    const headingId = uid('new-key');
    const done = h('button', { type: 'button', onclick: () => (show(made), name.focus()) }, 'Done: I have copied it');
    show(
      made,
      h(
        'div',
        { class: 'secret', role: 'region', 'aria-labelledby': headingId },
        h('h3', { id: headingId }, `New key: ${key.name}`),
        h('p', { class: 'message warn' }, h('strong', null, 'Copy this key now: it will not be shown again.'), ' The service keeps only a hash of it. Lost, it cannot be recovered: make another and revoke this one.'),
        h('p', { class: 'secret-line' }, h('code', { class: 'secret-key' }, key.key), ' ', copyButton(key.key, 'key', true)),
        h('p', { class: 'hint' }, `Scopes: ${key.scopes.join(', ')}. Sent as Authorization: Bearer <key>.`),
        h('div', { class: 'actions' }, done),
      ),
    );
    (made.querySelector('button.copy') as HTMLButtonElement).focus();
  }

  function askRevoke(k: ApiKey): void {
    const textId = uid('revoke');
    const yes = h('button', { type: 'button', class: 'danger', onclick: () => void revoke(k, yes) }, `Yes, revoke ${k.name}`);
    show(
      confirmBox,
      h(
        'div',
        { class: 'confirm', role: 'alertdialog', 'aria-label': `Revoke ${k.name}`, 'aria-describedby': textId },
        h('p', { id: textId }, `Revoke the key ${k.name} (`, h('code', null, k.prefix), `…)? Every program using it is refused within 5 s. It cannot be undone.`),
        h('div', { class: 'actions' }, yes, h('button', { type: 'button', onclick: () => show(confirmBox) }, 'No, keep it')),
      ),
    );
    yes.focus();
  }

  async function revoke(k: ApiKey, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await api<ApiKey>('DELETE', `/admin/api-keys/${seg(k.id)}`);
      show(confirmBox);
      ok(listMessage, `Revoked ${k.name} (${k.prefix}…): it is refused everywhere within 5 s.`);
      await load();
    } catch (err) {
      button.disabled = false;
      if (!(err instanceof ApiError && err.status === 401)) fail(listMessage, `Not revoked: ${(err as Error).message}`);
    }
  }

  function row(k: ApiKey): HTMLElement {
    const st = state(k);
    return h(
      'tr',
      null,
      cell('Name', { class: 'card-title' }, k.name),
      cell('Prefix', null, h('code', null, `${k.prefix}…`)),
      cell('Scopes', { class: 'wrap' }, k.scopes.join(', ')),
      cell('State', null, st === 'Active' ? st : h('span', { class: 'badge' }, st)),
      cell('Created (UTC)', { title: relative(k.createdAt) }, shortTime(k.createdAt)),
      cell('Expires (UTC)', { class: k.expiresAt ? '' : 'empty-cell' }, k.expiresAt ? shortTime(k.expiresAt) : ''),
      cell('Last used', { class: k.lastUsedAt ? '' : 'empty-cell' }, k.lastUsedAt ? relative(k.lastUsedAt) : ''),
      cell('Revoke', { class: st === 'Revoked' ? 'empty-cell' : 'card-action' }, st === 'Revoked' ? '' : h('button', { type: 'button', class: 'small', 'aria-label': `Revoke ${k.name}`, onclick: () => askRevoke(k) }, 'Revoke')),
    );
  }

  async function load(): Promise<void> {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (pager.cursor) q.set('cursor', pager.cursor);
    try {
      const page = await api<Page<ApiKey>>('GET', `/admin/api-keys?${q}`);
      show(body, page.data.length === 0 ? h('tr', null, h('td', { colspan: 8, class: 'empty' }, 'No API keys yet.')) : page.data.map(row));
      pager.loaded(page.nextCursor);
    } catch (err) {
      if (pageFailed(pager, err, (m) => show(body, errorRow(8, `The keys cannot be loaded: ${m}`)))) return load();
    }
  }

  void load();
  name.focus();
}
