import type { FastifyInstance } from 'fastify';
import { judgedActorOf } from '../http/actor.js';
import { routeOf } from '../http/auth.js';
import { clientAddress } from '../http/client-address.js';
import { AuditLog, auditRoute } from './audit.js';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Routes whose handlers record their own action (api_key.created, operator.changed, …) when they succeed. */
const OWN_ACTIONS = /^\/admin\/(?:api-keys|operators)(?:\/|$)/;

/**
 * Every state-changing admin call a credential was judged for goes into the audit log once it is
 * answered: its route (`POST /admin/orders/{id}/force-cancel`), what the route names (the order, the
 * SKU…), the principal and the HTTP status. Written after the answer, never holding it up or failing it;
 * the body is not recorded (it may carry a webhook's secret).
 */
export function auditAdminCalls(fastify: FastifyInstance, audit: AuditLog): void {
  fastify.addHook('onResponse', (req, reply, done) => {
    done();
    const route = routeOf(req);
    if (!STATE_CHANGING.has(req.method) || route === undefined || !route.startsWith('/admin/')) return;
    const actor = judgedActorOf(req);
    if (!actor) return;
    if (OWN_ACTIONS.test(route) && reply.statusCode < 400) return;
    const params = (req.params ?? {}) as Record<string, unknown>;
    const target = ['id', 'sku', 'name'].map((k) => params[k]).find((v): v is string => typeof v === 'string') ?? null;
    const extra = typeof params.locationId === 'string' ? { locationId: params.locationId } : {};
    void audit.record({
      principal: actor.principal,
      action: auditRoute(req.method, route),
      target: target && target.slice(0, 200),
      outcome: reply.statusCode,
      requestId: req.id,
      address: clientAddress(req.raw),
      detail: extra,
    });
  });
}
