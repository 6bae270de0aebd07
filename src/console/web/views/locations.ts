import { api, ApiError, can, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import type { LocationUsage, StockLocation } from '../types.js';
import { cell } from '../widgets.js';

/** A location id, like a SKU (API.md, "Locations"). */
export const LOCATION_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The stock locations, ordered as the API orders them (priority, then id), and a form that adds
 * one or changes one (PUT /admin/locations/{id} creates or replaces). There is no delete: an
 * inactive location is allocated nothing new.
 */
export function locationsView(main: HTMLElement): void {
  document.title = 'Locations · TCC operator console';
  const ids = { id: uid('location-id'), name: uid('location-name'), priority: uid('priority'), active: uid('active') };
  const idInput = h('input', { id: ids.id, name: 'id', type: 'text', maxlength: 64, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${ids.id}-hint` });
  const nameInput = h('input', { id: ids.name, name: 'name', type: 'text', maxlength: 200, autocomplete: 'off' });
  const priorityInput = h('input', { id: ids.priority, name: 'priority', type: 'number', min: 0, max: 1_000_000, step: 1, inputmode: 'numeric', value: 10, 'aria-describedby': `${ids.priority}-hint` });
  const activeInput = h('input', { id: ids.active, name: 'active', type: 'checkbox', checked: true });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save');
  const message = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  /** Adding and changing locations is offered only to a role that may change stock. */
  const mayWrite = can('inventory:write');
  const columns = mayWrite ? 5 : 4;
  const body = h('tbody', null, h('tr', null, h('td', { colspan: columns, class: 'empty' }, 'Loading…')));
  let known: StockLocation[] = [];
  const confirmBox = h('div');

  show(
    main,
    h('h1', null, 'Locations'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'locations-heading' },
      h('h2', { id: 'locations-heading' }, 'Stock locations'),
      h('p', { class: 'hint' }, 'Orders take stock from active locations, lowest priority number first. An inactive location is allocated nothing new; its existing holds stay.'),
      h(
        'div',
        { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-label': 'Warehouses and stores table' },
        h('table', { class: 'cards' }, h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Location id'), h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col', class: 'num' }, 'Priority'), h('th', { scope: 'col' }, 'Active'), mayWrite ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Change')) : null)), body),
      ),
    ),
    !mayWrite
      ? null
      : h(
      'section',
      { class: 'card', 'aria-labelledby': 'location-form-heading' },
      h('h2', { id: 'location-form-heading' }, 'Add or change a location'),
      h(
        'form',
        { class: 'row-form top', novalidate: true, onsubmit: (e: Event) => void submit(e) },
        h('div', { class: 'field' }, h('label', { for: ids.id }, 'Location id'), idInput, h('p', { id: `${ids.id}-hint`, class: 'hint' }, 'An existing id changes that location.')),
        h('div', { class: 'field' }, h('label', { for: ids.name }, 'Name'), nameInput),
        h('div', { class: 'field' }, h('label', { for: ids.priority }, 'Priority'), priorityInput, h('p', { id: `${ids.priority}-hint`, class: 'hint' }, '0-1000000, lower first.')),
        h('div', { class: 'field inline check' }, activeInput, h('label', { for: ids.active }, 'Active')),
        h('div', { class: 'actions' }, save),
      ),
      confirmBox,
      message,
    ),
  );

  function edit(l: StockLocation): void {
    idInput.value = l.id;
    nameInput.value = l.name;
    priorityInput.value = String(l.priority);
    activeInput.checked = l.active;
    message.className = 'message';
    message.textContent = '';
    nameInput.focus();
  }

  function showList(list: StockLocation[]): void {
    known = list;
    show(
      body,
      list.length === 0
        ? h('tr', null, h('td', { colspan: columns, class: 'empty' }, 'No locations.'))
        : list.map((l) =>
            h(
              'tr',
              null,
              cell('Location id', { class: 'card-title' }, h('code', null, l.id)),
              cell('Name', null, l.name),
              cell('Priority', { class: 'num' }, String(l.priority)),
              cell('Active', null, l.active ? 'Yes' : h('span', { class: 'badge' }, 'No')),
              mayWrite ? cell('Change', { class: 'card-action' }, h('button', { type: 'button', class: 'small', 'aria-label': `Change ${l.id}`, onclick: () => edit(l) }, 'Change')) : null,
            ),
          ),
    );
  }

  function fail(text: string): void {
    message.className = 'message error';
    message.setAttribute('role', 'alert');
    message.textContent = text;
  }

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    message.className = 'message';
    message.setAttribute('role', 'status');
    message.textContent = '';
    const id = idInput.value.trim();
    const name = nameInput.value.trim();
    const priority = priorityInput.value.trim();
    const problems: string[] = [];
    if (!LOCATION_ID.test(id)) problems.push('Location id must be 1-64 characters of letters, digits and _ . : -');
    if (name.length < 1 || name.length > 200) problems.push('Name must be 1-200 characters.');
    if (!/^\d{1,7}$/.test(priority) || Number(priority) > 1_000_000) problems.push('Priority must be a whole number from 0 to 1000000.');
    if (problems.length) return fail(`Not saved: ${problems.join(' ')}`);
    const before = known.find((l) => l.id === id);
    const body = { name, priority: Number(priority), active: activeInput.checked };
    show(confirmBox);
    // Taking a location offline: first what it affects, then only on a yes.
    if (before?.active && !body.active) return void askOffline(id, body);
    await put(id, body, !!before);
  }

  async function put(id: string, body: { name: string; priority: number; active: boolean }, existed: boolean): Promise<void> {
    show(confirmBox);
    save.disabled = true;
    try {
      const saved = await api<StockLocation>('PUT', `/admin/locations/${seg(id)}`, body);
      await load();
      message.className = 'message ok';
      message.textContent = `${existed ? 'Changed' : 'Added'} ${saved.id}: ${saved.name}, priority ${saved.priority}, ${saved.active ? 'active' : 'inactive'}.`;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) fail(`Not saved: ${(err as Error).message}`);
    } finally {
      save.disabled = false;
    }
  }

  async function askOffline(id: string, body: { name: string; priority: number; active: boolean }): Promise<void> {
    save.disabled = true;
    let u: LocationUsage;
    try {
      u = await api<LocationUsage>('GET', `/admin/locations/${seg(id)}/usage`);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) fail(`Not saved: what ${id} holds cannot be read now (${(err as Error).message}). Try again.`);
      return;
    } finally {
      save.disabled = false;
    }
    const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
    const holds = u.holdingOrders + u.reservedBranches;
    const yes = h('button', { type: 'button', class: 'danger', onclick: () => void put(id, body, true) }, `Yes, take ${id} offline`);
    const textId = uid('offline');
    show(
      confirmBox,
      h(
        'div',
        { class: 'confirm', role: 'alertdialog', 'aria-label': `Take ${id} offline`, 'aria-describedby': textId },
        h(
          'div',
          { id: textId },
          h(
            'p',
            null,
            h('strong', null, `${n(u.holdingOrders, 'holding order', 'holding orders')} and ${n(u.reservedBranches, 'reserved participant branch', 'reserved participant branches')} ${holds === 1 ? 'holds' : 'hold'} stock there (${n(u.reservedUnits, 'unit', 'units')}).`),
            ` ${n(u.skusWithStock, 'SKU has', 'SKUs have')} stock there.`,
          ),
          h('p', null, `Inactive, ${id} is allocated nothing new: its stock counts as not available, and new orders (click and collect there included) take stock elsewhere or fail. What it holds now stays until confirmed or released.`),
        ),
        h('div', { class: 'actions' }, yes, h('button', { type: 'button', onclick: () => show(confirmBox) }, 'No, keep it active')),
      ),
    );
    yes.focus();
  }

  async function load(): Promise<void> {
    try {
      showList((await api<{ data: StockLocation[] }>('GET', '/admin/locations')).data);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      show(body, h('tr', null, h('td', { colspan: columns, class: 'empty' }, h('span', { class: 'message error', role: 'alert' }, `The locations cannot be loaded: ${(err as Error).message}`))));
    }
  }

  void load();
}
