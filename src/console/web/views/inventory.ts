import { api, ApiError, can, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { money } from '../format.js';
import type { Nav } from '../nav.js';
import type { Inventory, InventoryPage, StockLocation } from '../types.js';
import { tableBox } from '../widgets.js';
import { cursorPager, errorRow, pageFailed } from './cursor-pager.js';
import { atDefaultAlone, catalogueRow, skuHref } from './inventory-table.js';
import { SKU } from './sku.js';
import { readSku } from './sku-read.js';
import { DEFAULT_LOCATION } from '../../../inventory/locations/default-location.js';

const LIST_PAGE = 20;

/**
 * The catalogue (every SKU, by SKU; a "Location" whose figures it shows, "Low stock" filtering it
 * and naming where), a SKU looked up by its code, and — for a SKU kept at `default` alone — its
 * on-hand stock set there; any other SKU's stock is set on its page, by location.
 */
export function inventoryView(main: HTMLElement, nav: Nav): void {
  document.title = 'Inventory · TCC operator console';
  const skuId = uid('sku');
  const onHandId = uid('on-hand');
  const lowId = uid('low-stock');
  const skuInput = h('input', { id: skuId, name: 'sku', type: 'text', autocomplete: 'off', spellcheck: 'false', maxlength: 64 });
  const lookMessage = h('p', { class: 'message', role: 'status' });
  const result = h('div');
  const params = new URLSearchParams(location.search);
  const low = h('input', { id: lowId, type: 'checkbox', name: 'lowStock', checked: params.get('lowStock') === 'true', onchange: () => filterChanged() });
  const locationId = uid('list-location');
  const locationSelect = h('select', { id: locationId, name: 'location', onchange: () => filterChanged() }, h('option', { value: '' }, 'All locations'));
  const wanted = params.get('location') ?? '';
  const listBody = h('tbody', null, h('tr', null, h('td', { colspan: 6, class: 'empty' }, 'Loading…')));
  const listCount = h('p', { class: 'hint', role: 'status' });
  const pager = cursorPager('Catalogue pages', () => void loadList());
  let item: Inventory | undefined;
  const numCol = (text: string) => h('th', { scope: 'col', class: 'num' }, text);

  show(
    main,
    h('div', { class: 'title-row' }, h('h1', null, 'Inventory'), can('inventory:write') ? h('div', { class: 'actions' }, nav.link('/console/inventory/import', 'Import from a file')) : null),
    h(
      'section',
      { class: 'card' },
      h('h2', null, 'Look up a SKU'),
      h(
        'form',
        { class: 'row-form', onsubmit: (e: Event) => void lookUp(e) },
        h('div', { class: 'field' }, h('label', { for: skuId }, 'SKU'), skuInput),
        h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Look up')),
      ),
      lookMessage,
    ),
    result,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'catalogue-heading' },
      h('h2', { id: 'catalogue-heading' }, 'Catalogue'),
      h(
        'div',
        { class: 'filters' },
        h('div', { class: 'field' }, h('label', { for: locationId }, 'Location'), locationSelect),
        h('div', { class: 'field inline check' }, low, h('label', { for: lowId }, 'Low stock')),
        listCount,
      ),
      tableBox(
        'Catalogue table',
        h(
          'table',
          { class: 'cards' },
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'SKU'), h('th', { scope: 'col' }, 'Name'), numCol('On hand'), numCol('Reserved'), numCol('Available'), h('th', { scope: 'col' }, 'Low at'))),
          listBody,
        ),
      ),
      pager.element,
    ),
  );

  /** The locations to choose from (the one in the URL kept, even before the list arrives). */
  async function loadLocations(): Promise<void> {
    try {
      const list = (await api<{ data: StockLocation[] }>('GET', '/admin/locations')).data;
      show(
        locationSelect,
        h('option', { value: '', selected: wanted === '' }, 'All locations'),
        list.map((l) => h('option', { value: l.id, selected: l.id === wanted }, `${l.name !== l.id ? `${l.name} (${l.id})` : l.id}${l.active ? '' : ' — inactive'}`)),
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) listCount.textContent = `The locations cannot be loaded: ${(err as Error).message}`;
    }
  }

  /** The catalogue query for the filters as they stand. */
  function listQuery(): URLSearchParams {
    const q = new URLSearchParams({ limit: String(LIST_PAGE) });
    const at = locationSelect.value;
    if (at) q.set('locationId', at);
    // Low stock at a location: the SKU's threshold against that location's available; over all of
    // them: low in all or at any one, so a store that ran out shows though the warehouses are full.
    if (low.checked) q.set(at ? 'lowAt' : 'lowAnywhere', at || 'true');
    if (pager.cursor) q.set('cursor', pager.cursor);
    return q;
  }

  function filterChanged(): void {
    const q = new URLSearchParams(location.search);
    if (low.checked) q.set('lowStock', 'true');
    else q.delete('lowStock');
    if (locationSelect.value) q.set('location', locationSelect.value);
    else q.delete('location');
    const search = q.toString();
    history.replaceState(null, '', `/console/inventory${search ? `?${search}` : ''}`);
    pager.reset();
    void loadList();
  }

  async function loadList(): Promise<void> {
    const asked = listQuery().toString();
    try {
      const page = await api<InventoryPage>('GET', `/admin/inventory?${asked}`);
      // A filter changed while this page was on its way: the newer request shows its own.
      if (listQuery().toString() !== asked) return;
      const at = locationSelect.value;
      show(
        listBody,
        page.data.length === 0
          ? h('tr', null, h('td', { colspan: 6, class: 'empty' }, low.checked ? `No SKU is low on stock${at ? ` at ${at}` : ''}.` : at ? `No SKU has stock at ${at}.` : 'No SKUs yet.'))
          : page.data.map((i) => catalogueRow(i, at, nav)),
      );
      listCount.textContent = low.checked
        ? at
          ? `Only SKUs whose available at ${at} is at or below their low-stock threshold.`
          : 'Only SKUs at or below their low-stock threshold, in all or at a location; "Low at" names the locations that are low (available there).'
        : at
          ? `On hand, reserved and available at ${at}.`
          : '';
      pager.loaded(page.nextCursor);
    } catch (err) {
      if (pageFailed(pager, err, (m) => show(listBody, errorRow(6, `The SKUs cannot be loaded: ${m}`)))) return loadList();
    }
  }

  async function lookUp(e?: Event): Promise<void> {
    e?.preventDefault();
    const sku = skuInput.value.trim();
    lookMessage.className = 'message';
    lookMessage.textContent = '';
    show(result);
    if (!SKU.test(sku)) {
      lookMessage.className = 'message error';
      lookMessage.textContent = 'A SKU is 1-64 characters of letters, digits and _ . : -';
      return;
    }
    const q = new URLSearchParams(location.search);
    q.set('sku', sku);
    history.replaceState(null, '', `/console/inventory?${q}`);
    try {
      showItem(await readSku(sku));
    } catch (err) {
      lookMessage.className = 'message error';
      lookMessage.textContent = err instanceof ApiError && err.status === 404 ? `There is no SKU ${sku}.` : (err as Error).message;
    }
  }

  function showItem(i: Inventory): HTMLElement {
    item = i;
    const atDefault = i.locations.find((l) => l.locationId === DEFAULT_LOCATION);
    const onHand = h('input', { id: onHandId, name: 'onHand', type: 'number', min: 0, max: 1_000_000_000, step: 1, value: atDefault?.onHand ?? 0, inputmode: 'numeric', 'aria-describedby': `${onHandId}-hint` });
    const saveMessage = h('p', { class: 'message', role: 'status' });
    const save = h('button', { type: 'submit', class: 'primary' }, 'Save');
    const fig = (label: string, value: string) => h('div', { class: 'figure' }, h('dt', null, label), h('dd', null, value));
    const headingId = uid('looked-up');
    const held = i.locations.filter((l) => l.onHand > 0 || l.reserved > 0).map((l) => `${l.locationId} ${l.onHand}`);
    // "On hand" here is the stock at default: typed for a SKU kept elsewhere, it would create stock
    // where the shop does not keep it. Such a SKU's stock is set on its page, location by location.
    const setHere = atDefaultAlone(i);
    const mayWrite = can('inventory:write');
    show(
      result,
      h(
        'section',
        { class: 'card', 'aria-labelledby': headingId },
        h('h2', { id: headingId }, i.name && i.name !== i.sku ? `${i.name} ` : '', h('code', null, i.sku)),
        h('dl', { class: 'figure-list narrow' }, fig('Price', money(i.priceMinor, i.currency)), fig('On hand', String(i.onHand)), fig('Reserved', String(i.reserved)), fig('Available', String(i.available))),
        !mayWrite
          ? null
          : setHere
          ? h(
              'form',
              { class: 'row-form', onsubmit: (e: Event) => void submit(e) },
              h('div', { class: 'field' }, h('label', { for: onHandId }, 'On hand'), onHand, h('p', { id: `${onHandId}-hint`, class: 'hint' }, `At the location ${DEFAULT_LOCATION}, where all of its stock is.`)),
              h('div', { class: 'actions' }, save),
            )
          : h(
              'p',
              { class: 'message info' },
              `Its stock is kept by location (${held.join(', ')}): set it there, with a reason the ledger records. `,
              nav.link(skuHref(i.sku), `Set stock on the page of ${i.sku}`),
            ),
        saveMessage,
        setHere || !mayWrite ? h('p', null, nav.link(skuHref(i.sku), `${i.sku}: ${mayWrite ? 'locations, adjustments and movements' : 'locations and movements'}`)) : null,
      ),
    );
    return saveMessage;

    async function submit(e: Event): Promise<void> {
      e.preventDefault();
      saveMessage.className = 'message';
      saveMessage.textContent = '';
      const value = onHand.value.trim();
      if (!/^\d{1,10}$/.test(value) || Number(value) > 1_000_000_000) {
        saveMessage.className = 'message error';
        saveMessage.textContent = 'On hand must be a whole number from 0 to 1000000000.';
        return;
      }
      save.disabled = true;
      const current = item!;
      const seen = current.locations.find((l) => l.locationId === DEFAULT_LOCATION);
      try {
        // Compare-and-set against the figure the operator saw, so a sale made meanwhile is not overwritten.
        const updated = await api<Inventory>('PUT', `/admin/inventory/${seg(current.sku)}/locations/${DEFAULT_LOCATION}`, {
          onHand: Number(value),
          ...(seen ? { expectedOnHand: seen.onHand } : {}),
        });
        const shown = showItem(updated);
        shown.className = 'message ok';
        shown.textContent = `Saved: ${updated.sku} has ${updated.onHand} on hand, ${updated.available} available.`;
        pager.reset();
        void loadList();
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return;
        let text = `Not saved: ${(err as Error).message}`;
        if (err instanceof ApiError && err.code === 'STOCK_BELOW_RESERVED')
          text = `Not saved: on hand at ${DEFAULT_LOCATION} cannot be less than what orders have reserved there (${seen?.reserved ?? 0} reserved).`;
        if (err instanceof ApiError && err.code === 'STOCK_CHANGED') {
          try {
            const fresh = showItem(await readSku(current.sku));
            fresh.className = 'message error';
            fresh.textContent = `Not saved: on hand at ${DEFAULT_LOCATION} changed since it was shown (a sale or another change). The figures are now up to date: check them and save again.`;
            return;
          } catch {
            text = `Not saved: on hand at ${DEFAULT_LOCATION} changed since it was shown. Look the SKU up again.`;
          }
        }
        saveMessage.className = 'message error';
        saveMessage.textContent = text;
      } finally {
        save.disabled = false;
      }
    }
  }

  void loadLocations().then(() => loadList());
  const given = params.get('sku');
  if (given) {
    skuInput.value = given;
    void lookUp();
  } else skuInput.focus();
}
