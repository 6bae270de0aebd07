import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { money } from '../format.js';
import type { Inventory } from '../types.js';

const SKU = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Look a SKU up, and set its on-hand stock (price and currency stay as they are). */
export function inventoryView(main: HTMLElement): void {
  document.title = 'Inventory · TCC operator console';
  const skuId = uid('sku');
  const onHandId = uid('on-hand');
  const skuInput = h('input', { id: skuId, name: 'sku', type: 'text', autocomplete: 'off', spellcheck: 'false', maxlength: 64 });
  const lookMessage = h('p', { class: 'message', role: 'status' });
  const result = h('div');
  let item: Inventory | undefined;

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
  );

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
    history.replaceState(null, '', `/console/inventory?sku=${encodeURIComponent(sku)}`);
    try {
      showItem(await api<Inventory>('GET', `/inventory/${seg(sku)}`));
    } catch (err) {
      lookMessage.className = 'message error';
      lookMessage.textContent = err instanceof ApiError && err.status === 404 ? `There is no SKU ${sku}.` : (err as Error).message;
    }
  }

  function showItem(i: Inventory): HTMLElement {
    item = i;
    const onHand = h('input', { id: onHandId, name: 'onHand', type: 'number', min: 0, max: 1_000_000_000, step: 1, value: i.onHand, inputmode: 'numeric' });
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
          h('div', { class: 'field' }, h('label', { for: onHandId }, 'On hand'), onHand),
          h('div', { class: 'actions' }, save),
        ),
        saveMessage,
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
      try {
        const current = item!;
        const updated = await api<Inventory>('PUT', `/admin/inventory/${seg(current.sku)}`, {
          name: current.name,
          priceMinor: current.priceMinor,
          currency: current.currency,
          onHand: Number(value),
        });
        const shown = showItem(updated);
        shown.className = 'message ok';
        shown.textContent = `Saved: ${updated.sku} has ${updated.onHand} on hand, ${updated.available} available.`;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return;
        saveMessage.className = 'message error';
        saveMessage.textContent = `Not saved: ${(err as Error).message}`;
      } finally {
        save.disabled = false;
      }
    }
  }

  const given = new URLSearchParams(location.search).get('sku');
  if (given) {
    skuInput.value = given;
    void lookUp();
  } else skuInput.focus();
}
