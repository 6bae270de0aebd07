import { api, ApiError, can, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import type { Nav } from '../nav.js';
import type { Inventory, Movement, MovementPage, StockLocation } from '../types.js';
import { cursorPager, errorRow, pageFailed } from './cursor-pager.js';
import { notFoundView } from './not-found.js';
import { readSku } from './sku-read.js';
import { movementRows, reasonText, REASONS, shownLocations, stockRows, stockSummary } from './sku-tables.js';
import { DEFAULT_LOCATION } from '../../../inventory/locations/default-location.js';

/** A SKU, like the API's (API.md, "Admin API"). */
export const SKU = /^[A-Za-z0-9_.:-]{1,64}$/;

const MOVEMENTS_PAGE = 20;

/**
 * One SKU (/console/inventory/{sku}): its stock at each location, an adjustment (a delta added to a
 * location's on hand, with a reason: the ledger records it), and its movements, newest first.
 */
export function skuView(main: HTMLElement, nav: Nav, sku: string): void {
  document.title = `${sku} · Inventory · TCC operator console`;
  if (!SKU.test(sku)) return notFoundView(main, nav, `There is no SKU ${sku}: a SKU is 1-64 characters of letters, digits and _ . : -`, 'SKU not found');

  const ids = { location: uid('location'), delta: uid('delta'), reason: uid('reason'), reference: uid('reference') };
  const summary = h('div', { 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));
  const stockBody = h('tbody');
  const locationSelect = h('select', { id: ids.location, name: 'locationId' });
  const delta = h('input', { id: ids.delta, name: 'delta', type: 'number', step: 1, min: -1_000_000_000, max: 1_000_000_000, inputmode: 'numeric', 'aria-describedby': `${ids.delta}-hint` });
  const reason = h('select', { id: ids.reason, name: 'reason' }, REASONS.map(([value, text]) => h('option', { value }, text)));
  const reference = h('input', { id: ids.reference, name: 'reference', type: 'text', maxlength: 200, autocomplete: 'off', 'aria-describedby': `${ids.reference}-hint` });
  const adjust = h('button', { type: 'submit', class: 'primary' }, 'Adjust');
  const outcome = h('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const movementsBody = h('tbody', null, h('tr', null, h('td', { colspan: 8, class: 'empty' }, 'Loading…')));
  const pager = cursorPager('Movement pages', () => void loadMovements());
  let current: Inventory | undefined;
  let locations: StockLocation[] = [];
  /** The adjustment sent and its Idempotency-Key, kept until it has an answer: sent again after a lost answer, it adjusts once. */
  let pending: { body: string; key: string } | undefined;

  const numCol = (text: string) => h('th', { scope: 'col', class: 'num' }, text);
  const col = (text: string) => h('th', { scope: 'col' }, text);

  async function load(): Promise<void> {
    let item: Inventory;
    try {
      item = await readSku(sku);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      if (err instanceof ApiError && err.status === 404) return notFoundView(main, nav, `There is no SKU ${sku}.`, 'SKU not found');
      show(main, h('h1', null, 'SKU ', h('code', null, sku)), h('p', { class: 'message error', role: 'alert' }, `The SKU cannot be loaded: ${(err as Error).message}`));
      return;
    }
    render();
    showStock(item);
    try {
      locations = (await api<{ data: StockLocation[] }>('GET', '/admin/locations')).data;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      locations = [];
    }
    fillLocations();
    await loadMovements();
  }

  function render(): void {
    show(
      main,
      h('p', { class: 'crumbs' }, nav.link('/console/inventory', '← Inventory')),
      h('h1', null, 'SKU ', h('code', { class: 'order-id' }, sku)),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'stock-heading' },
        h('h2', { id: 'stock-heading' }, 'Stock'),
        summary,
        h('h3', null, 'At each location'),
        h(
          'div',
          { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-label': 'Stock table' },
          h('table', { class: 'cards' }, h('thead', null, h('tr', null, col('Location'), numCol('On hand'), numCol('Reserved'), numCol('Safety stock'), numCol('Available'))), stockBody),
        ),
      ),
      // Adjusting is offered only to a role that may change stock.
      !can('inventory:write')
        ? null
        : h(
        'section',
        { class: 'card', 'aria-labelledby': 'adjust-heading' },
        h('h2', { id: 'adjust-heading' }, 'Adjust stock'),
        h(
          'form',
          { class: 'row-form top', novalidate: true, onsubmit: (e: Event) => void submit(e) },
          h('div', { class: 'field' }, h('label', { for: ids.location }, 'Location'), locationSelect),
          h('div', { class: 'field' }, h('label', { for: ids.delta }, 'Delta'), delta, h('p', { id: `${ids.delta}-hint`, class: 'hint' }, 'Added to on hand: 12 or -3.')),
          h('div', { class: 'field' }, h('label', { for: ids.reason }, 'Reason'), reason),
          h('div', { class: 'field' }, h('label', { for: ids.reference }, 'Reference'), reference, h('p', { id: `${ids.reference}-hint`, class: 'hint' }, 'Optional: a delivery note, a ticket.')),
          h('div', { class: 'actions' }, adjust),
        ),
        outcome,
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'movements-heading' },
        h('h2', { id: 'movements-heading' }, 'Movements'),
        h('p', { class: 'hint' }, 'Every change of on hand, newest first.'),
        h(
          'div',
          { class: 'table-wrap', tabindex: 0, role: 'group', 'aria-label': 'Movements table' },
          h(
            'table',
            { class: 'cards' },
            h('thead', null, h('tr', null, col('Time (UTC)'), col('Location'), col('Kind'), numCol('Delta'), numCol('On hand after'), col('Reason'), col('Reference'), col('By'))),
            movementsBody,
          ),
        ),
        pager.element,
      ),
    );
  }

  function showStock(i: Inventory): void {
    current = i;
    summary.removeAttribute('aria-busy');
    show(summary, ...stockSummary(i));
    show(stockBody, stockRows(i));
  }

  /**
   * Every location may take an adjustment; those holding the SKU first, as the table lists them. It
   * starts at the first location by priority that holds stock (not `default` for a SKU kept elsewhere).
   */
  function fillLocations(): void {
    const held = current ? shownLocations(current).map((l) => l.locationId) : [];
    const first = current?.locations.find((l) => l.onHand > 0)?.locationId ?? held[0] ?? DEFAULT_LOCATION;
    const chosen = locationSelect.value || first;
    const names = new Map(locations.map((l) => [l.id, l]));
    const order = [...held, ...locations.map((l) => l.id).filter((id) => !held.includes(id))];
    show(
      locationSelect,
      order.map((id) => {
        const l = names.get(id);
        const text = l && l.name !== id ? `${id} — ${l.name}` : id;
        return h('option', { value: id, selected: id === chosen }, l && !l.active ? `${text} (inactive)` : text);
      }),
    );
  }

  function fail(text: string): void {
    outcome.className = 'message error';
    outcome.setAttribute('role', 'alert');
    outcome.textContent = text;
  }

  /** A refusal in words: what the operator asked and why the service would not do it. */
  function refusal(err: ApiError, locationId: string, change: number): string {
    const at = current?.locations.find((l) => l.locationId === locationId);
    switch (err.code) {
      case 'STOCK_BELOW_RESERVED':
        return at
          ? `Not adjusted: ${locationId} has ${at.onHand} on hand and ${at.reserved} reserved by orders, so on hand cannot go ${change < 0 ? `down by ${-change}` : `to ${at.onHand + change}`} (it may not fall below what is reserved, nor below 0).`
          : `Not adjusted: on hand at ${locationId} may not fall below what is reserved there, nor below 0.`;
      case 'NOT_FOUND':
        return `Not adjusted: ${err.message.replace(/^./, (c) => c.toUpperCase())}.`;
      case 'IDEMPOTENCY_KEY_REUSED':
        return 'Not adjusted: this adjustment was already sent with other values. Check the movements and try again.';
      default:
        return `Not adjusted: ${err.message}`;
    }
  }

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    outcome.className = 'message';
    outcome.setAttribute('role', 'status');
    outcome.textContent = '';
    const locationId = locationSelect.value;
    const d = delta.value.trim();
    const ref = reference.value.trim();
    const problems: string[] = [];
    if (!/^-?\d{1,10}$/.test(d) || Number(d) === 0 || Math.abs(Number(d)) > 1_000_000_000) problems.push('Delta must be a whole number from -1000000000 to 1000000000, not 0.');
    if (ref.length > 200) problems.push('Reference must be at most 200 characters.');
    if (!locationId) problems.push('Choose a location.');
    if (problems.length) return fail(`Not adjusted: ${problems.join(' ')}`);
    const body = { locationId, delta: Number(d), reason: reason.value, ...(ref ? { reference: ref } : {}) };
    const text = JSON.stringify(body);
    if (pending?.body !== text) pending = { body: text, key: randomKey() };
    adjust.disabled = true;
    try {
      const answer = await api<{ movement: Movement; inventory: Inventory }>('POST', `/admin/inventory/${seg(sku)}/adjustments`, body, {
        'idempotency-key': pending.key,
      });
      pending = undefined;
      showStock(answer.inventory);
      fillLocations();
      delta.value = '';
      reference.value = '';
      const m = answer.movement;
      outcome.className = 'message ok';
      outcome.textContent = `Adjusted: ${m.delta > 0 ? '+' : ''}${m.delta} at ${m.locationId} (${reasonText(m.reason)}); on hand there is now ${m.onHandAfter}.`;
      pager.reset();
      await loadMovements();
    } catch (err) {
      if (!(err instanceof ApiError)) return fail(`Not adjusted: ${(err as Error).message}`);
      if (err.status === 401) return;
      // Only a lost answer keeps the key: the same adjustment sent again is applied at most once.
      if (err.status !== 0) pending = undefined;
      fail(err.status === 0 ? `Not known whether it was adjusted: ${err.message} Pressing Adjust again applies it at most once.` : refusal(err, locationId, Number(d)));
    } finally {
      adjust.disabled = false;
    }
  }

  async function loadMovements(): Promise<void> {
    const q = new URLSearchParams({ limit: String(MOVEMENTS_PAGE) });
    if (pager.cursor) q.set('cursor', pager.cursor);
    try {
      const page = await api<MovementPage>('GET', `/admin/inventory/${seg(sku)}/movements?${q}`);
      show(movementsBody, movementRows(page.data));
      pager.loaded(page.nextCursor);
    } catch (err) {
      if (pageFailed(pager, err, (m) => show(movementsBody, errorRow(8, `The movements cannot be loaded: ${m}`)))) return loadMovements();
    }
  }

  void load();
}

/** 128 random bits in hex (crypto.getRandomValues also works on a page served over plain http). */
function randomKey(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

