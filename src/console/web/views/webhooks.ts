import { api, ApiError, seg } from '../api.js';
import { h, show, uid } from '../dom.js';
import { relative, shortTime } from '../format.js';
import type { Nav } from '../nav.js';
import type { WebhookDelivery, WebhookEndpoint } from '../types.js';

const STATUSES = ['failed', 'pending', 'delivered'] as const;
const PAGE_SIZE = 50;

/** Webhook endpoints and their deliveries by status; a failed delivery can be sent again. */
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
        h('td', null, d.type),
        h('td', null, d.orderId ? nav.link(`/console/orders/${d.orderId}`, h('code', null, d.orderId)) : '—'),
        h('td', null, d.status),
        h('td', { class: 'num' }, String(d.attempts)),
        h('td', { class: 'wrap' }, d.lastError ?? '—'),
        h('td', { title: relative(d.createdAt) }, shortTime(d.createdAt)),
        h('td', null, resend),
      );
      return tr;
    }

    more.addEventListener('click', () => void page(false));
    void page(true);
    return h(
      'section',
      { class: 'card', 'aria-labelledby': headingId },
      h('h2', { id: headingId }, e.name),
      h('dl', { class: 'details' }, h('div', { class: 'detail' }, h('dt', null, 'URL'), h('dd', null, h('code', null, e.url))), h('div', { class: 'detail' }, h('dt', null, 'Events'), h('dd', null, e.events.join(', ')))),
      h('h3', null, 'Deliveries'),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'deliveries' },
          h('thead', null, h('tr', null, [['Event type'], ['Order'], ['Status'], ['Attempts', 'num'], ['Last error'], ['Created (UTC)'], ['']].map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
          body,
        ),
      ),
      more,
      message,
    );
  }

  void load();
}
