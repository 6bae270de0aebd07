import { api, ApiError, Session, setSession, whenSessionLost } from './api.js';
import { h, show } from './dom.js';
import { leaveView } from './lifecycle.js';
import { createNav } from './nav.js';
import { inventoryView } from './views/inventory.js';
import { locationsView } from './views/locations.js';
import { notFoundView } from './views/not-found.js';
import { orderView } from './views/order.js';
import { ordersView } from './views/orders.js';
import { signInView } from './views/sign-in.js';
import { skuView } from './views/sku.js';
import { webhooksView } from './views/webhooks.js';

/**
 * The operator console: one page that routes in the browser (/console, /console/orders/{id},
 * /console/inventory, /console/inventory/{sku}, /console/locations, /console/webhooks) over the
 * admin API, signed in by an HttpOnly session cookie.
 */
const root = document.getElementById('app')!;
let signedIn = false;
let operator: string | null = null;
const nav = createNav(render);

type Route = { view: 'orders' } | { view: 'order'; id: string } | { view: 'inventory' } | { view: 'sku'; sku: string } | { view: 'locations' } | { view: 'webhooks' } | { view: 'not-found' };

function route(): Route {
  const path = location.pathname.replace(/\/+$/, '');
  const order = /^\/console\/orders\/([^/]+)$/.exec(path);
  if (order) {
    let id = order[1];
    try {
      id = decodeURIComponent(id);
    } catch {
      // a broken escape: the admin API answers 404 for it, as for any unknown id
    }
    return { view: 'order', id };
  }
  if (path === '/console/inventory') return { view: 'inventory' };
  const sku = /^\/console\/inventory\/([^/]+)$/.exec(path);
  if (sku) {
    try {
      return { view: 'sku', sku: decodeURIComponent(sku[1]) };
    } catch {
      return { view: 'sku', sku: sku[1] }; // a broken escape: not a SKU, and the page says so
    }
  }
  if (path === '/console/locations') return { view: 'locations' };
  if (path === '/console/webhooks') return { view: 'webhooks' };
  if (path === '/console' || path === '') return { view: 'orders' };
  return { view: 'not-found' };
}

function render(): void {
  if (!signedIn) return;
  leaveView();
  const r = route();
  const main = h('main', { id: 'main', tabindex: '-1' });
  const item = (href: string, label: string, active: boolean) => {
    const a = nav.link(href, label);
    if (active) a.setAttribute('aria-current', 'page');
    return h('li', null, a);
  };
  show(
    root,
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h(
      'header',
      { class: 'top' },
      h('span', { class: 'brand' }, 'TCC operator console'),
      h(
        'nav',
        { 'aria-label': 'Console' },
        h(
          'ul',
          null,
          item('/console', 'Orders', r.view === 'orders' || r.view === 'order'),
          item('/console/inventory', 'Inventory', r.view === 'inventory' || r.view === 'sku'),
          item('/console/locations', 'Locations', r.view === 'locations'),
          item('/console/webhooks', 'Webhooks', r.view === 'webhooks'),
          h('li', null, h('a', { href: '/admin/queues' }, 'Queue dashboard')),
        ),
      ),
      h('span', { class: 'who' }, operator ? `Signed in as ${operator}` : null, h('button', { type: 'button', class: 'link-button', onclick: () => void signOut() }, 'Sign out')),
    ),
    main,
  );
  if (r.view === 'order') orderView(main, nav, r.id);
  else if (r.view === 'inventory') inventoryView(main, nav);
  else if (r.view === 'sku') skuView(main, nav, r.sku);
  else if (r.view === 'locations') locationsView(main);
  else if (r.view === 'webhooks') webhooksView(main, nav);
  else if (r.view === 'not-found') notFoundView(main, nav, 'There is no such page in the console.');
  else ordersView(main, nav);
}

function signIn(notice?: string): void {
  signedIn = false;
  leaveView();
  signInView(root, notice, (session) => {
    // Sent here from the queue dashboard (it redirects a browser without a session): back to it.
    if (new URLSearchParams(location.search).get('next') === '/admin/queues') {
      location.assign('/admin/queues');
      return;
    }
    signedIn = true;
    operator = session.operator ?? null;
    render();
  });
}

async function signOut(): Promise<void> {
  try {
    await api('DELETE', '/console/session');
  } catch (err) {
    // Already ended elsewhere (401): the outcome the operator asked for.
    if (!(err instanceof ApiError && err.status === 401)) {
      alertBar(`Sign out failed: ${(err as Error).message}`);
      return;
    }
  }
  setSession(undefined);
  signIn('You have signed out.');
}

function alertBar(text: string): void {
  root.prepend(h('p', { class: 'message error banner', role: 'alert' }, text));
}

whenSessionLost(() => signIn('Your session has ended. Sign in again.'));

async function start(): Promise<void> {
  try {
    const session = await api<Session>('GET', '/console/session');
    setSession(session);
    operator = session.operator ?? null;
    signedIn = true;
    render();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) signIn();
    else show(root, h('main', { class: 'signin-page' }, h('p', { class: 'message error', role: 'alert' }, `The console cannot start: ${(err as Error).message}`)));
  }
}

void start();
