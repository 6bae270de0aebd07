import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { money } from '../format.js';
import type { Nav } from '../nav.js';
import type { Inventory, InventoryPage } from '../types.js';
import { cursorPager } from './cursor-pager.js';
import { SKU } from './sku.js';

const LIST_PAGE = 20;
/** PUT /admin/inventory/{sku} and the console's "On hand" set the stock of this location. */
const DEFAULT_LOCATION = 'default';

/** The link to a SKU's page. */
export function skuHref(sku: string): string {
  return `/console/inventory/${encodeURIComponent(sku)}`;
}

/**
 * The catalogue (every SKU, by SKU, "Low stock" filtering it), a SKU looked up by its code, and its
 * on-hand stock at the location default set (price and currency stay as they are).
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
  const listBody = h('tbody', null, h('tr', null, h('td', { colspan: 5, class: 'empty' }, 'Loading…')));
  const listCount = h('p', { class: 'hint', role: 'status' });
  const pager = cursorPager('Catalogue pages', () => void loadList());
  let item: Inventory | undefined;
  const numCol = (text: string) => h('th', { scope: 'col', class: 'num' }, text);

  show(
    main,
    h('h1', null, 'Inventory'),
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
      h('div', { class: 'filters' }, h('div', { class: 'field inline check' }, low, h('label', { for: lowId }, 'Low stock')), listCount),
      h(
        'div',
        { class: 'table-wrap' },
        h('table', null, h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'SKU'), h('th', { scope: 'col' }, 'Name'), numCol('On hand'), numCol('Reserved'), numCol('Available'))), listBody),
      ),
      pager.element,
    ),
  );

  function filterChanged(): void {
    const q = new URLSearchParams(location.search);
    if (low.checked) q.set('lowStock', 'true');
    else q.delete('lowStock');
    const search = q.toString();
    history.replaceState(null, '', `/console/inventory${search ? `?${search}` : ''}`);
    pager.reset();
    void loadList();
  }

  async function loadList(): Promise<void> {
    const q = new URLSearchParams({ limit: String(LIST_PAGE) });
    if (low.checked) q.set('lowStock', 'true');
    if (pager.cursor) q.set('cursor', pager.cursor);
    const asked = q.toString();
    try {
      const page = await api<InventoryPage>('GET', `/admin/inventory?${asked}`);
      // A filter changed while this page was on its way: the newer request shows its own.
      const now = new URLSearchParams({ limit: String(LIST_PAGE) });
      if (low.checked) now.set('lowStock', 'true');
      if (pager.cursor) now.set('cursor', pager.cursor);
      if (now.toString() !== asked) return;
      show(
        listBody,
        page.data.length === 0
          ? h('tr', null, h('td', { colspan: 5, class: 'empty' }, low.checked ? 'No SKU is low on stock.' : 'No SKUs yet.'))
          : page.data.map((i) => {
              const isLow = i.lowStockThreshold > 0 && i.available <= i.lowStockThreshold;
              return h(
                'tr',
                null,
                h('td', null, nav.link(skuHref(i.sku), i.sku), isLow ? ' ' : null, isLow ? h('span', { class: 'flag', title: `At or below its threshold of ${i.lowStockThreshold}` }, 'low') : null),
                h('td', { class: 'wrap' }, i.name),
                h('td', { class: 'num' }, String(i.onHand)),
                h('td', { class: 'num' }, String(i.reserved)),
                h('td', { class: 'num' }, String(i.available)),
              );
            }),
      );
      listCount.textContent = low.checked ? 'Only SKUs at or below their low-stock threshold.' : '';
      pager.loaded(page.nextCursor);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      if (err instanceof ApiError && err.status === 400 && pager.cursor) {
        pager.reset();
        return loadList();
      }
      show(listBody, h('tr', null, h('td', { colspan: 5, class: 'empty' }, h('span', { class: 'message error', role: 'alert' }, `The SKUs cannot be loaded: ${(err as Error).message}`))));
      pager.loaded(null);
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
      showItem(await api<Inventory>('GET', `/inventory/${seg(sku)}`));
    } catch (err) {
      lookMessage.className = 'message error';
      lookMessage.textContent = err instanceof ApiError && err.status === 404 ? `There is no SKU ${sku}.` : (err as Error).message;
    }
  }

  function showItem(i: Inventory): HTMLElement {
    item = i;
    const atDefault = i.locations.find((l) => l.locationId === DEFAULT_LOCATION);
    const elsewhere = i.locations.some((l) => l.locationId !== DEFAULT_LOCATION && l.onHand > 0);
    const onHand = h('input', { id: onHandId, name: 'onHand', type: 'number', min: 0, max: 1_000_000_000, step: 1, value: atDefault?.onHand ?? 0, inputmode: 'numeric', 'aria-describedby': `${onHandId}-hint` });
    const saveMessage = h('p', { class: 'message', role: 'status' });
    const save = h('button', { type: 'submit', class: 'primary' }, 'Save');
    const fig = (label: string, value: string) => h('div', { class: 'figure' }, h('dt', null, label), h('dd', null, value));
    show(
      result,
      h(
        'section',
        { class: 'card' },
        h('h2', null, i.name && i.name !== i.sku ? `${i.name} ` : '', h('code', null, i.sku)),
        h('dl', { class: 'figure-list narrow' }, fig('Price', money(i.priceMinor, i.currency)), fig('On hand', String(i.onHand)), fig('Reserved', String(i.reserved)), fig('Available', String(i.available))),
        h(
          'form',
          { class: 'row-form', onsubmit: (e: Event) => void submit(e) },
          h(
            'div',
            { class: 'field' },
            h('label', { for: onHandId }, 'On hand'),
            onHand,
            h('p', { id: `${onHandId}-hint`, class: 'hint' }, elsewhere ? `At the location ${DEFAULT_LOCATION}; the others are on the SKU's page.` : `At the location ${DEFAULT_LOCATION}.`),
          ),
          h('div', { class: 'actions' }, save),
        ),
        saveMessage,
        h('p', null, nav.link(skuHref(i.sku), `${i.sku}: locations, adjustments and movements`)),
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
            const fresh = showItem(await api<Inventory>('GET', `/inventory/${seg(current.sku)}`));
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

  void loadList();
  const given = params.get('sku');
  if (given) {
    skuInput.value = given;
    void lookUp();
  } else skuInput.focus();
}
