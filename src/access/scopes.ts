/**
 * Scopes: each right a route needs (API.md, "Identity and access"). The root token and the `admin`
 * scope hold every right; a role is a set of scopes.
 */
export const SCOPES = ['checkout', 'participant', 'orders:read', 'orders:write', 'inventory:read', 'inventory:write', 'webhooks', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = ['viewer', 'operator', 'stock', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const VIEWER: Scope[] = ['orders:read', 'inventory:read'];

/** What each role may do. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  viewer: VIEWER,
  operator: [...VIEWER, 'orders:write'],
  stock: [...VIEWER, 'inventory:write'],
  admin: SCOPES,
};

/**
 * Every protected route, as `METHOD template` (the router's template, `:param` as Fastify spells
 * it), and the scope it needs. HEAD is judged as its GET. A protected route missing here stops
 * start-up (assertEveryRouteScoped); the queue dashboard's routes (bull-board's, under
 * /admin/queues) are all `admin`.
 */
export const ROUTE_SCOPES: Readonly<Record<string, Scope>> = {
  // The checkout API (protected only when CHECKOUT_AUTH=required).
  'POST /orders': 'checkout',
  'GET /orders/:id': 'checkout',
  'POST /orders/:id/confirm': 'checkout',
  'POST /orders/:id/cancel': 'checkout',
  'POST /orders/:id/extend': 'checkout',
  'GET /inventory/:sku': 'checkout',
  // Outside coordinators.
  'POST /tcc/inventory/try': 'participant',
  'POST /tcc/inventory/confirm': 'participant',
  'POST /tcc/inventory/cancel': 'participant',
  // Orders.
  'GET /admin/orders': 'orders:read',
  'GET /admin/orders/counts': 'orders:read',
  'GET /admin/orders/:id': 'orders:read',
  'GET /admin/orders/:id/payment': 'orders:read',
  'GET /admin/orders/:id/events': 'orders:read',
  'GET /admin/stats': 'orders:read',
  'GET /admin/reconciliation': 'orders:read',
  'GET /admin/participant/transactions': 'orders:read',
  'POST /admin/orders/:id/force-confirm': 'orders:write',
  'POST /admin/orders/:id/force-cancel': 'orders:write',
  'POST /admin/orders/:id/retry-now': 'orders:write',
  'POST /admin/orders/:id/acknowledge': 'orders:write',
  'POST /admin/orders/bulk-cancel': 'orders:write',
  'POST /admin/reconciliation': 'orders:write',
  // Inventory.
  'GET /admin/inventory': 'inventory:read',
  'GET /admin/inventory/:sku/movements': 'inventory:read',
  'GET /admin/inventory/consistency': 'inventory:read',
  'GET /admin/locations': 'inventory:read',
  'GET /admin/locations/:id/usage': 'inventory:read',
  'PUT /admin/inventory/:sku': 'inventory:write',
  'PUT /admin/inventory/:sku/locations/:locationId': 'inventory:write',
  'POST /admin/inventory/:sku/adjustments': 'inventory:write',
  'POST /admin/inventory/import': 'inventory:write',
  'POST /admin/inventory/consistency/repair': 'inventory:write',
  'PUT /admin/locations/:id': 'inventory:write',
  // Webhooks.
  'GET /admin/webhooks': 'webhooks',
  'PUT /admin/webhooks/:name': 'webhooks',
  'DELETE /admin/webhooks/:name': 'webhooks',
  'GET /admin/webhooks/:name/deliveries': 'webhooks',
  'POST /admin/webhooks/:name/deliveries/retry-failed': 'webhooks',
  'POST /admin/webhooks/:name/deliveries/:id/retry': 'webhooks',
  // Identity and access.
  'POST /admin/api-keys': 'admin',
  'GET /admin/api-keys': 'admin',
  'GET /admin/api-keys/:id': 'admin',
  'DELETE /admin/api-keys/:id': 'admin',
  'POST /admin/operators': 'admin',
  'GET /admin/operators': 'admin',
  'GET /admin/operators/:id': 'admin',
  'PATCH /admin/operators/:id': 'admin',
  'GET /admin/audit': 'admin',
};

const QUEUE_BOARD = /^\/admin\/queues(?:\/|$)/;
const CHECKOUT = /^\/(?:orders|inventory)(?:\/|$)/;

/** Routes behind a credential whatever CHECKOUT_AUTH says: the admin API (with the queue dashboard) and the TCC participant. */
export function isAdminOrParticipantRoute(route: string): boolean {
  return route === '/admin' || route.startsWith('/admin/') || route.startsWith('/tcc/');
}

/** The checkout API's routes: behind the `checkout` scope when CHECKOUT_AUTH=required. */
export function isCheckoutRoute(route: string): boolean {
  return CHECKOUT.test(route);
}

/** The table's scope for a route, HEAD judged as GET; undefined when the table has none. */
export function tableScope(method: string, route: string): Scope | undefined {
  const m = method === 'HEAD' ? 'GET' : method;
  return ROUTE_SCOPES[`${m} ${route}`] ?? (QUEUE_BOARD.test(route) ? 'admin' : undefined);
}

/**
 * The scope a request to `route` needs, or undefined when the route needs no credential. A
 * protected route the table does not name (a method it lists for no route, OPTIONS) needs `admin`:
 * an omission never opens a route.
 */
export function scopeResolver(checkoutAuth: 'open' | 'required'): (method: string, route: string) => Scope | undefined {
  return (method, route) => {
    if (isAdminOrParticipantRoute(route)) return tableScope(method, route) ?? 'admin';
    if (checkoutAuth === 'required' && isCheckoutRoute(route)) return tableScope(method, route) ?? 'checkout';
    return undefined;
  };
}

/**
 * Start-up's check: every protected route the router holds has its scope in the table (HEAD routes
 * Fastify adds for GETs included). Throws naming the first routes without one.
 */
export function assertEveryRouteScoped(routes: { method: string; url: string }[]): void {
  const missing = routes
    .filter((r) => isAdminOrParticipantRoute(r.url) || isCheckoutRoute(r.url))
    .filter((r) => tableScope(r.method, r.url) === undefined)
    .map((r) => `${r.method} ${r.url}`);
  if (missing.length > 0) throw new Error(`routes without a scope in ROUTE_SCOPES (src/access/scopes.ts): ${[...new Set(missing)].join(', ')}`);
}
