import { api, ApiError, can, Session, setSession, whenSessionLost } from './api.js';
import { h, show } from './dom.js';
import { leaveView } from './lifecycle.js';
import { createNav } from './nav.js';
import { apiKeysView } from './views/api-keys.js';
import { auditView } from './views/audit.js';
import { importView } from './views/import.js';
import { inventoryView } from './views/inventory.js';
import { locationsView } from './views/locations.js';
import { notAllowedView, notFoundView } from './views/not-found.js';
import { operatorsView } from './views/operators.js';
import { orderView } from './views/order.js';
import { ordersView } from './views/orders.js';
import { signInView } from './views/sign-in.js';
import { skuView } from './views/sku.js';
import { webhooksView } from './views/webhooks.js';

/**
 * The operator console: one page that routes in the browser (/console, /console/orders/{id},
 * /console/inventory, /console/inventory/{sku}, /console/locations, /console/webhooks, and for
 * admins /console/api-keys, /console/operators, /console/audit) over the admin API, signed in by an
 * HttpOnly session cookie. It offers only what the session's scopes allow.
 */
const root = document.getElementById('app')!;
let signedIn = false;
let operator: string | null = null;
let role: string | null = null;
const nav = createNav(render);

type Page = 'orders' | 'inventory' | 'import' | 'locations' | 'webhooks' | 'api-keys' | 'operators' | 'audit' | 'not-found';
type Route = { view: Page } | { view: 'order'; id: string } | { view: 'sku'; sku: string };

/** The console's own pages by path, and the scope each needs to open at all. */
const PAGES: Record<string, { view: Page; scope?: string; title?: string }> = {
  '/console/inventory': { view: 'inventory' },
  '/console/inventory/import': { view: 'import', scope: 'inventory:write', title: 'Import' },
  '/console/locations': { view: 'locations' },
  '/console/webhooks': { view: 'webhooks', scope: 'webhooks', title: 'Webhooks' },
  '/console/api-keys': { view: 'api-keys', scope: 'admin', title: 'API keys' },
  '/console/operators': { view: 'operators', scope: 'admin', title: 'Operators' },
  '/console/audit': { view: 'audit', scope: 'admin', title: 'Audit' },
};

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
  if (PAGES[path]) return { view: PAGES[path].view };
  const sku = /^\/console\/inventory\/([^/]+)$/.exec(path);
  if (sku) {
    try {
      return { view: 'sku', sku: decodeURIComponent(sku[1]) };
    } catch {
      return { view: 'sku', sku: sku[1] }; // a broken escape: not a SKU, and the page says so
    }
  }
  if (path === '/console' || path === '') return { view: 'orders' };
  return { view: 'not-found' };
}

function render(): void {
  if (!signedIn) return;
  leaveView();
  const r = route();
  const main = h('main', { id: 'main', tabindex: '-1' });
  const item = (href: string, label: string, active: boolean, scope?: string) => {
    if (scope && !can(scope)) return null;
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
          item('/console/inventory', 'Inventory', r.view === 'inventory' || r.view === 'sku' || r.view === 'import'),
          item('/console/locations', 'Locations', r.view === 'locations'),
          item('/console/webhooks', 'Webhooks', r.view === 'webhooks', 'webhooks'),
          item('/console/api-keys', 'API keys', r.view === 'api-keys', 'admin'),
          item('/console/operators', 'Operators', r.view === 'operators', 'admin'),
          item('/console/audit', 'Audit', r.view === 'audit', 'admin'),
          can('admin') ? h('li', null, h('a', { href: '/admin/queues' }, 'Queue dashboard')) : null,
        ),
      ),
      h('span', { class: 'who' }, h('span', { class: 'who-name' }, who()), h('button', { type: 'button', class: 'link-button', onclick: () => void signOut() }, 'Sign out')),
    ),
    main,
  );
  const page = Object.values(PAGES).find((p) => p.view === r.view);
  if (page?.scope && !can(page.scope)) notAllowedView(main, nav, page.title ?? r.view, role);
  else if (r.view === 'order') orderView(main, nav, r.id);
  else if (r.view === 'inventory') inventoryView(main, nav);
  else if (r.view === 'import') importView(main, nav);
  else if (r.view === 'sku') skuView(main, nav, r.sku);
  else if (r.view === 'locations') locationsView(main);
  else if (r.view === 'webhooks') webhooksView(main, nav);
  else if (r.view === 'api-keys') apiKeysView(main);
  else if (r.view === 'operators') operatorsView(main);
  else if (r.view === 'audit') auditView(main);
  else if (r.view === 'not-found') notFoundView(main, nav, 'There is no such page in the console.');
  else ordersView(main, nav);
}

/** Who is signed in, as the header says it: "Signed in as Ana Ops (operator)", or with the admin token. */
function who(): string {
  if (role) return `Signed in as ${operator ?? 'an operator'} (${role})`;
  return operator ? `Signed in as ${operator} (admin token)` : 'Signed in with the admin token';
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
    role = session.role ?? null;
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
    role = session.role ?? null;
    signedIn = true;
    render();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) signIn();
    else show(root, h('main', { class: 'signin-page' }, h('p', { class: 'message error', role: 'alert' }, `The console cannot start: ${(err as Error).message}`)));
  }
}

void start();
