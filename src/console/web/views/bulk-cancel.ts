import { api, ApiError } from '../api.js';
import { h, show, uid } from '../dom.js';
import type { Filters } from '../types.js';

const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];

/** The bulk-cancel filter for the list's filters (bulk cancel knows no "needs attention"). */
function bulkFilter(f: Filters): Record<string, string | number> {
  const filter: Record<string, string | number> = {};
  if (f.status) filter.status = f.status;
  if (f.olderThanMinutes) filter.olderThanMinutes = Number(f.olderThanMinutes);
  if (f.sku) filter.sku = f.sku;
  if (f.customerId) filter.customerId = f.customerId;
  return filter;
}

/**
 * "Cancel matching": first the dry run says how many holding orders the list's filters match, then
 * "Cancel N orders" (with a Reason) force-cancels them and says how many were canceled.
 */
export function bulkCancel(box: HTMLElement, f: Filters, done: () => void): void {
  const panel = h('section', { class: 'card inset bulk', 'aria-label': 'Cancel matching orders' });
  show(box, panel);
  const close = h('button', { type: 'button', onclick: () => show(box) }, 'Close');
  const message = h('p', { class: 'message', role: 'status' });
  const filter = bulkFilter(f);

  if (f.status && !HOLDING.includes(f.status)) {
    show(panel, h('p', { class: 'message info' }, `${f.status} orders hold no stock: there is nothing to cancel.`), close);
    return;
  }
  if (f.idPrefix) {
    show(panel, h('p', { class: 'message info' }, 'Bulk cancel does not filter by the start of an order id: open the orders one by one, or filter by Status, Customer, SKU or Older than.'), close);
    return;
  }
  if (Object.keys(filter).length === 0 && !f.needsAttention) {
    show(panel, h('p', { class: 'message info' }, 'Filter the list first (Status, Customer, SKU, Older than): Cancel matching cancels the holding orders the filters match.'), close);
    return;
  }
  if (f.needsAttention) {
    show(panel, h('p', { class: 'message info' }, 'Bulk cancel does not filter by "Needs attention": clear that box first, so the orders canceled are the ones listed.'), close);
    return;
  }
  show(panel, h('p', { class: 'hint' }, 'Counting the holding orders these filters match…'));
  void count();

  async function count(): Promise<void> {
    try {
      const dry = await api<{ matched: number }>('POST', '/admin/orders/bulk-cancel', { filter, reason: 'count only (dry run)', dryRun: true });
      ask(dry.matched);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) show(panel, h('p', { class: 'message error', role: 'alert' }, (err as Error).message), close);
    }
  }

  function ask(matched: number): void {
    if (matched === 0) {
      show(panel, h('p', { class: 'message info' }, 'No holding order (TRY_SUCCESS or CONFIRM_PENDING) matches these filters.'), close);
      return;
    }
    const reasonId = uid('bulk-reason');
    const reason = h('input', { id: reasonId, type: 'text', name: 'reason', maxlength: 500, autocomplete: 'off' });
    const go = h('button', { type: 'submit', class: 'danger' }, `Cancel ${matched} ${matched === 1 ? 'order' : 'orders'}`);
    const capped = matched >= 1000 ? ' (at most 1000 a time: cancel again for the rest)' : '';
    show(
      panel,
      h('p', null, h('strong', null, `${matched} holding ${matched === 1 ? 'order matches' : 'orders match'} these filters${capped}.`), ' They will be force-canceled and their stock released; a charge is refunded.'),
      h(
        'form',
        { class: 'row-form', onsubmit: (e: Event) => void cancel(e, reason, go) },
        h('div', { class: 'field' }, h('label', { for: reasonId }, 'Reason'), reason),
        h('div', { class: 'actions' }, go, close),
      ),
      message,
    );
    reason.focus();
  }

  async function cancel(e: Event, reason: HTMLInputElement, go: HTMLButtonElement): Promise<void> {
    e.preventDefault();
    const text = reason.value.trim();
    if (!text) {
      message.className = 'message error';
      message.textContent = 'Write the reason: it is recorded on every order canceled.';
      reason.focus();
      return;
    }
    go.disabled = true;
    try {
      const r = await api<{ matched: number; canceled: string[] }>('POST', '/admin/orders/bulk-cancel', { filter, reason: text, dryRun: false });
      const n = r.canceled.length;
      const skipped = r.matched - n;
      show(
        panel,
        h(
          'p',
          { class: 'message ok', role: 'status' },
          `Canceled ${n} ${n === 1 ? 'order' : 'orders'}.`,
          skipped > 0 ? ` ${skipped} had meanwhile been paid, canceled or expired and were left as they are.` : '',
        ),
        close,
      );
      done();
    } catch (err) {
      go.disabled = false;
      if (err instanceof ApiError && err.status === 401) return;
      message.className = 'message error';
      message.textContent = `Not canceled: ${(err as Error).message}`;
    }
  }
}
