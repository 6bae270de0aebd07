import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { relative, shortTime } from '../format.js';
import type { Operator, Page } from '../types.js';
import { cell, tableBox } from '../widgets.js';
import { cursorPager, errorRow, pageFailed } from './cursor-pager.js';

/** The roles and what each may do (API.md, "Operators"). */
export const ROLES = ['viewer', 'operator', 'stock', 'admin'];
const ROLES_HINT = 'viewer: looks, changes nothing · operator: also acts on orders · stock: also changes stock and locations · admin: everything, keys and operators included.';

const PAGE_SIZE = 50;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const roleSelect = (id: string, selected = 'viewer') =>
  h('select', { id, name: 'role', 'aria-describedby': `${id}-hint` }, ROLES.map((value) => h('option', { value, selected: value === selected }, value)));
const roleHint = (id: string) => h('p', { id: `${id}-hint`, class: 'hint narrow-hint' }, ROLES_HINT);

/** A password as the API takes it: 12-200 characters; the message says what is wrong. */
function passwordProblem(p: string): string | undefined {
  if (p.length < 12) return 'Password must be at least 12 characters.';
  if (p.length > 200) return 'Password must be at most 200 characters.';
  return undefined;
}

/**
 * Operators (/console/operators, admins only): the people who sign in to the console. Add one (email,
 * name, role, password); change one's role, reset their password, disable or enable them — each of
 * which ends their console sessions on every process within 5 s.
 */
export function operatorsView(main: HTMLElement): void {
  document.title = 'Operators · TCC operator console';
  const ids = { email: uid('op-email'), name: uid('op-name'), role: uid('op-role'), password: uid('op-password') };
  const email = h('input', { id: ids.email, name: 'email', type: 'email', maxlength: 254, autocomplete: 'off', spellcheck: 'false' });
  const name = h('input', { id: ids.name, name: 'name', type: 'text', maxlength: 100, autocomplete: 'off' });
  const role = roleSelect(ids.role);
  const password = h('input', { id: ids.password, name: 'password', type: 'password', maxlength: 200, autocomplete: 'new-password', 'aria-describedby': `${ids.password}-hint` });
  const add = h('button', { type: 'submit', class: 'primary' }, 'Add operator');
  const addMessage = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const editor = h('div');
  const listMessage = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const body = h('tbody', null, h('tr', null, h('td', { colspan: 7, class: 'empty' }, 'Loading…')));
  const pager = cursorPager('Operator pages', () => void load());
  const col = (text: string) => h('th', { scope: 'col' }, text);

  show(
    main,
    h('h1', null, 'Operators'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'operators-heading' },
      h('h2', { id: 'operators-heading' }, 'People who sign in'),
      listMessage,
      tableBox(
        'Operators table',
        h(
          'table',
          { class: 'cards' },
          h('thead', null, h('tr', null, col('Name'), col('Email'), col('Role'), col('State'), col('Last sign-in'), col('Added (UTC)'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Change')))),
          body,
        ),
      ),
      pager.element,
    ),
    editor,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'add-operator-heading' },
      h('h2', { id: 'add-operator-heading' }, 'Add an operator'),
      h(
        'form',
        { class: 'row-form top', novalidate: true, onsubmit: (e: Event) => void submit(e) },
        h('div', { class: 'field' }, h('label', { for: ids.email }, 'Email'), email),
        h('div', { class: 'field' }, h('label', { for: ids.name }, 'Name'), name),
        h('div', { class: 'field' }, h('label', { for: ids.role }, 'Role'), role, roleHint(ids.role)),
        h('div', { class: 'field' }, h('label', { for: ids.password }, 'Password'), password, h('p', { id: `${ids.password}-hint`, class: 'hint' }, '12-200 characters. Hand it over by a safe way.')),
        h('div', { class: 'actions' }, add),
      ),
      addMessage,
    ),
  );

  function say(el: HTMLElement, good: boolean, text: string): void {
    el.className = `message ${good ? 'ok' : 'error'}`;
    el.setAttribute('role', good ? 'status' : 'alert');
    el.textContent = text;
  }

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    addMessage.textContent = '';
    const body = { email: email.value.trim(), name: name.value.trim(), role: role.value, password: password.value };
    if (!EMAIL.test(body.email) || body.email.length > 254) return void (say(addMessage, false, 'Not added: Email must be an email address (name@example.com).'), email.focus());
    if (body.name.length < 1 || body.name.length > 100) return void (say(addMessage, false, 'Not added: Name must be 1-100 characters.'), name.focus());
    const weak = passwordProblem(body.password);
    if (weak) return void (say(addMessage, false, `Not added: ${weak}`), password.focus());
    add.disabled = true;
    try {
      const made = await api<Operator>('POST', '/admin/operators', body);
      email.value = '';
      name.value = '';
      password.value = '';
      role.value = 'viewer';
      say(addMessage, true, `Added ${made.name} (${made.email}) as ${made.role}. They sign in with their email and the password you gave.`);
      pager.reset();
      await load();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      if (err instanceof ApiError && err.code === 'OPERATOR_EXISTS') return void (say(addMessage, false, `Not added: an operator with the email ${body.email} already exists (emails are compared in any case).`), email.focus());
      say(addMessage, false, `Not added: ${(err as Error).message}`);
    } finally {
      add.disabled = false;
      password.value = '';
    }
  }

  /** Changes one operator; their sessions end everywhere within 5 s (role, password, disabled). */
  async function patch(o: Operator, change: Record<string, unknown>, done: string, out: HTMLElement, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const changed = await api<Operator>('PATCH', `/admin/operators/${seg(o.id)}`, change);
      say(edit(changed), true, `${done} ${changed.name}: their console sessions end within 5 s.`);
      await load();
    } catch (err) {
      button.disabled = false;
      if (!(err instanceof ApiError && err.status === 401)) say(out, false, `Not changed: ${(err as Error).message}`);
    }
  }

  /** "Change …" on a row: that operator's role, password and whether they may sign in. */
  function edit(o: Operator): HTMLElement {
    const rid = uid('edit-role');
    const pid = uid('edit-password');
    const headingId = uid('edit-heading');
    const newRole = roleSelect(rid, o.role);
    const newPassword = h('input', { id: pid, name: 'newPassword', type: 'password', maxlength: 200, autocomplete: 'new-password', 'aria-describedby': `${pid}-hint` });
    const out = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
    const confirmBox = h('div');
    const saveRole = h('button', { type: 'submit', class: 'primary' }, 'Save role');
    const setPassword = h('button', { type: 'submit' }, 'Reset password');
    const disabled = o.disabledAt !== null;
    const toggle = h('button', { type: 'button', class: disabled ? '' : 'danger', onclick: () => (disabled ? void patch(o, { disabled: false }, 'Enabled', out, toggle) : askDisable()) }, disabled ? 'Enable' : 'Disable');

    function askDisable(): void {
      const textId = uid('disable');
      const yes = h('button', { type: 'button', class: 'danger', onclick: () => void patch(o, { disabled: true }, 'Disabled', out, yes) }, `Yes, disable ${o.name}`);
      show(
        confirmBox,
        h(
          'div',
          { class: 'confirm', role: 'alertdialog', 'aria-label': `Disable ${o.name}`, 'aria-describedby': textId },
          h('p', { id: textId }, `Disable ${o.name} (${o.email})? They can no longer sign in, and their console sessions end within 5 s. Enable them again at any time.`),
          h('div', { class: 'actions' }, yes, h('button', { type: 'button', onclick: () => show(confirmBox) }, 'No, keep them')),
        ),
      );
      yes.focus();
    }

    show(
      editor,
      h(
        'section',
        { class: 'card', 'aria-labelledby': headingId },
        h('h2', { id: headingId }, `Change ${o.name}`),
        h('p', { class: 'hint' }, `${o.email} · ${o.role}${disabled ? ' · disabled' : ''}. Each change below ends their console sessions.`),
        h(
          'form',
          {
            class: 'row-form top edit-form',
            novalidate: true,
            onsubmit: (e: Event) => {
              e.preventDefault();
              if (newRole.value === o.role) return say(out, false, `Not changed: ${o.name} is already ${o.role}.`);
              void patch(o, { role: newRole.value }, `Role changed to ${newRole.value} for`, out, saveRole);
            },
          },
          h('div', { class: 'field' }, h('label', { for: rid }, 'Role'), newRole, roleHint(rid)),
          h('div', { class: 'actions' }, saveRole),
        ),
        h(
          'form',
          {
            class: 'row-form top edit-form',
            novalidate: true,
            onsubmit: (e: Event) => {
              e.preventDefault();
              const weak = passwordProblem(newPassword.value);
              if (weak) return void (say(out, false, `Not changed: ${weak}`), newPassword.focus());
              void patch(o, { password: newPassword.value }, 'New password set for', out, setPassword);
              newPassword.value = '';
            },
          },
          h('div', { class: 'field' }, h('label', { for: pid }, 'New password'), newPassword, h('p', { id: `${pid}-hint`, class: 'hint' }, '12-200 characters.')),
          h('div', { class: 'actions' }, setPassword),
        ),
        h('div', { class: 'actions edit-actions' }, toggle, h('button', { type: 'button', onclick: () => show(editor) }, 'Close')),
        confirmBox,
        out,
      ),
    );
    newRole.focus();
    return out;
  }

  function row(o: Operator): HTMLElement {
    return h(
      'tr',
      null,
      cell('Name', { class: 'card-title' }, o.name),
      cell('Email', { class: 'wrap' }, o.email),
      cell('Role', null, o.role),
      cell('State', null, o.disabledAt ? h('span', { class: 'badge' }, 'Disabled') : 'Active'),
      cell('Last sign-in', { class: o.lastSignInAt ? '' : 'empty-cell' }, o.lastSignInAt ? relative(o.lastSignInAt) : 'never'),
      cell('Added (UTC)', { title: relative(o.createdAt) }, shortTime(o.createdAt)),
      cell('Change', { class: 'card-action' }, h('button', { type: 'button', class: 'small', 'aria-label': `Change ${o.email}`, onclick: () => edit(o) }, 'Change')),
    );
  }

  async function load(): Promise<void> {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (pager.cursor) q.set('cursor', pager.cursor);
    try {
      const page = await api<Page<Operator>>('GET', `/admin/operators?${q}`);
      show(body, page.data.length === 0 ? h('tr', null, h('td', { colspan: 7, class: 'empty' }, 'No operators yet: add the first below.')) : page.data.map(row));
      pager.loaded(page.nextCursor);
    } catch (err) {
      if (pageFailed(pager, err, (m) => show(body, errorRow(7, `The operators cannot be loaded: ${m}`)))) return load();
    }
  }

  void load();
}
