import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import type { StockLocation } from '../types.js';

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
  const body = h('tbody', null, h('tr', null, h('td', { colspan: 5, class: 'empty' }, 'Loading…')));
  let known: StockLocation[] = [];

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
        { class: 'table-wrap' },
        h('table', null, h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Location id'), h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col', class: 'num' }, 'Priority'), h('th', { scope: 'col' }, 'Active'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Change')))), body),
      ),
    ),
    h(
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
        ? h('tr', null, h('td', { colspan: 5, class: 'empty' }, 'No locations.'))
        : list.map((l) =>
            h(
              'tr',
              null,
              h('td', null, h('code', null, l.id)),
              h('td', null, l.name),
              h('td', { class: 'num' }, String(l.priority)),
              h('td', null, l.active ? 'Yes' : h('span', { class: 'badge' }, 'No')),
              h('td', null, h('button', { type: 'button', class: 'small', 'aria-label': `Change ${l.id}`, onclick: () => edit(l) }, 'Change')),
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
    const existed = known.some((l) => l.id === id);
    save.disabled = true;
    try {
      const saved = await api<StockLocation>('PUT', `/admin/locations/${seg(id)}`, { name, priority: Number(priority), active: activeInput.checked });
      await load();
      message.className = 'message ok';
      message.textContent = `${existed ? 'Changed' : 'Added'} ${saved.id}: ${saved.name}, priority ${saved.priority}, ${saved.active ? 'active' : 'inactive'}.`;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) fail(`Not saved: ${(err as Error).message}`);
    } finally {
      save.disabled = false;
    }
  }

  async function load(): Promise<void> {
    try {
      showList((await api<{ data: StockLocation[] }>('GET', '/admin/locations')).data);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      show(body, h('tr', null, h('td', { colspan: 5, class: 'empty' }, h('span', { class: 'message error', role: 'alert' }, `The locations cannot be loaded: ${(err as Error).message}`))));
    }
  }

  void load();
}
