import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { relative, shortTime } from '../format.js';
import type { Nav } from '../nav.js';
import type { WebhookDelivery, WebhookEndpoint } from '../types.js';
import { cell, tableBox } from '../widgets.js';

const STATUSES = ['failed', 'pending', 'delivered'] as const;
const PAGE_SIZE = 50;

/**
 * A failed attempt in a row: what it met and the start of what the receiver answered (the whole
 * of what is kept, 200 characters, is the cell's title and the endpoint's "Last error").
 */
function failure(error: string | null, body: string | null): string {
  if (!error) return '—';
  if (!body) return error;
  return `${error}: ${body.length > 60 ? `${body.slice(0, 60)}…` : body}`;
}

/**
 * Webhook endpoints, each at a glance (its last hour, its last error with the receiver's answer),
 * and their deliveries by status; one failed delivery, or every failed one, can be sent again.
 */
export function webhooksView(main: HTMLElement, nav: Nav): void {
  document.title = 'Webhooks · TCC operator console';
  const given = new URLSearchParams(location.search).get('status') ?? 'failed';
  const status = (STATUSES as readonly string[]).includes(given) || given === 'all' ? given : 'failed';
  const statusId = uid('delivery-status');
  const select = h(
    'select',
    { id: statusId, name: 'deliveryStatus', onchange: () => nav.go(select.value === 'failed' ? '/console/webhooks' : `/console/webhooks?status=${select.value}`) },
    STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)),
    h('option', { value: 'all', selected: status === 'all' }, 'all'),
  );
  const list = h('div', { 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));

  show(
    main,
    h('h1', null, 'Webhooks'),
    h('form', { class: 'filters card', onsubmit: (e: Event) => e.preventDefault() }, h('div', { class: 'field' }, h('label', { for: statusId }, 'Delivery status'), select)),
    list,
  );

  async function load(): Promise<void> {
    try {
      const endpoints = (await api<{ data: WebhookEndpoint[] }>('GET', '/admin/webhooks')).data;
      list.removeAttribute('aria-busy');
      if (endpoints.length === 0) return void show(list, h('p', { class: 'card hint' }, 'No webhook endpoints are registered (PUT /admin/webhooks/{name}).'));
      show(list, endpoints.map((e) => endpointCard(e)));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) show(list, h('p', { class: 'message error', role: 'alert' }, (err as Error).message));
    }
  }

  function endpointCard(e: WebhookEndpoint): HTMLElement {
    const body = h('tbody');
    const more = h('button', { type: 'button', hidden: true }, 'More deliveries');
    const message = h('p', { class: 'message', role: 'status' });
    const headingId = uid('endpoint');
    let cursor: string | null = null;

    async function page(first: boolean): Promise<void> {
      const q = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (status !== 'all') q.set('status', status);
      if (!first && cursor) q.set('cursor', cursor);
      try {
        const r = await api<{ data: WebhookDelivery[]; nextCursor: string | null }>('GET', `/admin/webhooks/${seg(e.name)}/deliveries?${q}`);
        if (first) show(body);
        if (first && r.data.length === 0) show(body, h('tr', null, h('td', { colspan: 7, class: 'empty' }, `No ${status === 'all' ? '' : `${status} `}deliveries.`)));
        for (const d of r.data) body.append(row(d));
        cursor = r.nextCursor;
        more.hidden = !cursor;
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 401)) {
          message.className = 'message error';
          message.textContent = (err as Error).message;
        }
      }
    }

    function row(d: WebhookDelivery): HTMLElement {
      const resend =
        d.status === 'failed'
          ? h(
              'button',
              {
                type: 'button',
                onclick: async (ev: Event) => {
                  const b = ev.currentTarget as HTMLButtonElement;
                  b.disabled = true;
                  try {
                    await api('POST', `/admin/webhooks/${seg(e.name)}/deliveries/${seg(d.id)}/retry`);
                    message.className = 'message ok';
                    message.textContent = `Resent ${d.type} (${d.id}): it is pending, due now.`;
                    tr.replaceWith(row({ ...d, status: 'pending' }));
                  } catch (err) {
                    b.disabled = false;
                    if (err instanceof ApiError && err.status === 401) return;
                    message.className = 'message error';
                    message.textContent = `Not resent: ${(err as Error).message}`;
                  }
                },
              },
              'Resend',
            )
          : null;
      const tr = h(
        'tr',
        null,
        cell('Event type', { class: 'card-title' }, d.type),
        cell('Order', null, d.orderId ? nav.link(`/console/orders/${d.orderId}`, h('code', null, d.orderId)) : '—'),
        cell('Status', null, d.status),
        cell('Attempts', { class: 'num' }, String(d.attempts)),
        cell('Last error', { class: 'wrap', title: d.lastResponse ?? '' }, failure(d.lastError, d.lastResponse)),
        cell('Created (UTC)', { title: relative(d.createdAt) }, shortTime(d.createdAt)),
        cell('Resend', { class: resend ? 'card-action' : 'empty-cell' }, resend),
      );
      return tr;
    }

    more.addEventListener('click', () => void page(false));
    void page(true);
    const lastHour = `${e.lastHour.delivered} delivered, ${e.lastHour.failed} failed`;
    const last = e.lastFailure;
    const resendBox = h('div');
    const resendAll =
      e.failedDeliveries > 0
        ? h('button', { type: 'button', onclick: () => askResend() }, `Resend failed (${e.failedDeliveries})`)
        : null;

    /** "Resend failed": first the count, then only on a yes. */
    function askResend(): void {
      const n = e.failedDeliveries;
      const yes = h('button', { type: 'button', class: 'danger', onclick: () => void resendFailed(yes) }, `Yes, resend ${n}`);
      const textId = uid('resend');
      show(
        resendBox,
        h(
          'div',
          { class: 'confirm', role: 'alertdialog', 'aria-label': `Resend failed deliveries to ${e.name}`, 'aria-describedby': textId },
          h('p', { id: textId }, `Resend ${n} failed ${n === 1 ? 'delivery' : 'deliveries'} to ${e.name} (${e.url})? Each is sent again with its webhook-id, so the receiver can drop one it already has.`),
          h('div', { class: 'actions' }, yes, h('button', { type: 'button', onclick: () => show(resendBox) }, 'No, not now')),
        ),
      );
      yes.focus();
    }

    async function resendFailed(button: HTMLButtonElement): Promise<void> {
      button.disabled = true;
      try {
        const r = await api<{ resent: number }>('POST', `/admin/webhooks/${seg(e.name)}/deliveries/retry-failed`);
        show(resendBox);
        message.className = 'message ok';
        message.textContent = `Resent ${r.resent} failed ${r.resent === 1 ? 'delivery' : 'deliveries'}: pending, due now.`;
        if (resendAll) resendAll.hidden = true;
        void page(true);
      } catch (err) {
        button.disabled = false;
        if (err instanceof ApiError && err.status === 401) return;
        message.className = 'message error';
        message.textContent = `Not resent: ${(err as Error).message}`;
      }
    }

    return h(
      'section',
      { class: 'card', 'aria-labelledby': headingId },
      h('h2', { id: headingId }, e.name),
      h(
        'dl',
        { class: 'details' },
        h('div', { class: 'detail' }, h('dt', null, 'URL'), h('dd', null, h('code', null, e.url))),
        h('div', { class: 'detail' }, h('dt', null, 'Events'), h('dd', null, e.events.join(', '))),
        h('div', { class: `detail${e.lastHour.failed > 0 ? ' alert' : ''}` }, h('dt', null, 'Last hour'), h('dd', null, lastHour)),
        h('div', { class: 'detail' }, h('dt', null, 'Failed now'), h('dd', null, String(e.failedDeliveries), ' ', resendAll)),
        last
          ? h(
              'div',
              { class: 'detail wide' },
              h('dt', null, 'Last error'),
              h(
                'dd',
                null,
                h('span', { title: last.at }, `${relative(last.at)}: `),
                h('strong', null, last.httpStatus ? `HTTP ${last.httpStatus}` : last.error),
                last.body ? h('span', null, ' — the receiver answered: ', h('code', { class: 'response' }, last.body)) : last.httpStatus ? ' (no body)' : '',
              ),
            )
          : h('div', { class: 'detail' }, h('dt', null, 'Last error'), h('dd', null, 'none')),
      ),
      resendBox,
      message,
      h('h3', null, 'Deliveries'),
      tableBox(
        `Deliveries table of ${e.name}`,
        h(
          'table',
          { class: 'deliveries cards' },
          h('thead', null, h('tr', null, [['Event type'], ['Order'], ['Status'], ['Attempts', 'num'], ['Last error'], ['Created (UTC)'], ['Resend']].map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
          body,
        ),
      ),
      more,
    );
  }

  void load();
}
