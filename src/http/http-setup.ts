import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, RawServerBase } from 'fastify';
import type pino from 'pino';
import { AppError } from '../common/errors.js';
import { isUuid } from '../common/uuid.js';
import { accessLog, requestContext } from '../logging/logger.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { Authenticator, pathOf, routeOf, Verdict } from './auth.js';
import { clientAddress } from './client-address.js';
import { malformedRequest } from './http-server.js';
import { BODY_LIMIT, CsvText, IMPORT_BODY_LIMIT, IMPORT_ROUTE, parseJsonBody } from './json-body.js';
import { answerError, sendProblem } from './problem.js';
import { RATE_LIMITED_ROUTES, RateLimiter } from './rate-limit.js';

/** Routes whose `:id` is an order's, so a log line names the order it is about. */
const ORDER_ROUTE = /^\/(?:admin\/)?orders\/:id(?:\/|$)/;

/** The order a request is about, from the matched route and its decoded parameters (not the raw URL). */
function orderIdOf(route: string | undefined, params: unknown): string | undefined {
  if (route === undefined || !ORDER_ROUTE.test(route)) return undefined;
  const id = (params as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' && isUuid(id) ? id : undefined;
}

export interface HttpSetup {
  auth: Authenticator;
  metrics: MetricsService;
  logger: pino.Logger;
  logRequests: 'all' | 'errors';
  /** RATE_LIMIT_PER_MINUTE > 0: the limiter for the checkout routes (no hook at all when off). */
  rateLimiter?: RateLimiter;
}

/**
 * Fastify's side of the HTTP contract, before and around Nest's handlers: request ids, auth ahead
 * of the body, bodies parsed as JSON under the input rules, an access log line and latency by
 * route. Errors Fastify itself raises (a body over the limit, a parse error) reach Nest's error
 * handler and so the ProblemFilter, like every other error.
 */
export function configureHttp(app: FastifyInstance, setup: HttpSetup): ResponseRecorder {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // A CSV import keeps its text; text/csv anywhere else is read as JSON like any body.
  app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (req, body, done) => {
    try {
      done(null, req.routeOptions.url === IMPORT_ROUTE ? new CsvText(body as string) : parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // The import's own limit (a route's bodyLimit overrides the parsers'): Fastify refuses a declared
  // Content-Length above it before reading the body, and stops reading one that grows past it.
  // Routes are registered when the application starts listening, after this hook is in place.
  app.addHook('onRoute', (route) => {
    if (route.url === IMPORT_ROUTE) route.bodyLimit = IMPORT_BODY_LIMIT;
  });

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (refuseMalformed(req, reply)) return;
    afterAuth(setup.auth, req, reply, routeOf(req), done);
  });

  const limiter = setup.rateLimiter;
  if (limiter) {
    app.addHook('onRequest', async (req, reply) => {
      const method = req.method === 'HEAD' ? 'GET' : req.method; // Fastify answers HEAD on every GET route
      if (!RATE_LIMITED_ROUTES.has(`${method} ${req.routeOptions?.url}`)) return;
      const waitS = await limiter.check(clientAddress(req.raw));
      if (waitS === undefined) return;
      reply.header('retry-after', String(waitS));
      sendProblem(reply, 'RATE_LIMITED', `too many requests from this address; retry in ${waitS} s`);
      return reply;
    });
    app.addHook('onClose', async () => limiter.close());
  }

  // Everything the handler does, down to the gateway call it causes, logs with this request's id.
  app.addHook('preHandler', (req, _reply, done) => {
    requestContext.run({ reqId: req.id }, done);
  });

  const record = responseRecorder(setup);
  app.addHook('onResponse', (req, reply, done) => {
    const route = routeOf(req);
    record(req.method, route ?? 'unmatched', req.url, req.id, reply.statusCode, reply.elapsedTime, orderIdOf(route, req.params), req.raw);
    done();
  });
  return record;
}

/**
 * After every answer: its latency by route template, and its access-log line (with its request id,
 * its raw path without the query, its route, the client's address and the order it is about).
 */
export type ResponseRecorder = (
  method: string,
  route: string,
  url: string,
  requestId: string,
  status: number,
  elapsedMs: number,
  orderId: string | undefined,
  req: IncomingMessage,
) => void;

function responseRecorder(setup: Pick<HttpSetup, 'metrics' | 'logger' | 'logRequests'>): ResponseRecorder {
  // One labelled series per method, route template and status (a bounded set): looked up once,
  // not hashed from a label object on every answer.
  const series = new Map<string, ReturnType<MetricsService['httpDuration']['labels']>>();
  const log = accessLog(setup.logger);
  return (method, route, url, requestId, status, elapsedMs, orderId, req) => {
    const name = `${method} ${route} ${status}`;
    let latency = series.get(name);
    if (!latency) series.set(name, (latency = setup.metrics.httpDuration.labels(method, route, String(status))));
    latency.observe(elapsedMs / 1000);
    if (setup.logRequests !== 'all' && status < 500) return;
    if (route === '/metrics' || route.startsWith('/health')) return;
    log({ requestId, method, path: pathOf(url), route, remoteAddress: clientAddress(req), status, responseTimeMs: Math.round(elapsedMs), orderId });
  };
}

/** Answers a browser's GET of a page path the router could not match; false when it is no page's. */
export type PageFallback = (req: FastifyRequest, reply: FastifyReply, path: string) => boolean;

/**
 * Fastify's router errors, in the contract's words: a path segment that is not valid
 * percent-encoding is a malformed id, 404 — except where a malformed SKU is a validation error
 * (PUT /admin/inventory/{sku}, PUT /admin/webhooks/{name}) and where a page answers (the
 * console's, saying it found nothing). Auth still comes first.
 */
export function frameworkErrors(auth: () => Authenticator, page: PageFallback = () => false) {
  return (err: Error, req: FastifyRequest<any, RawServerBase>, reply: FastifyReply<any, RawServerBase>): void => {
    reply.header('x-request-id', req.id);
    // No route matched, so nothing will run; the raw path only decides whether a refusal says 401
    // first (what a protected route would answer) or 404.
    const path = pathOf(req.url);
    afterAuth(auth(), req as FastifyRequest, reply as FastifyReply, path, () => {
      if (req.method === 'PUT' && /^\/admin\/inventory\/[^/]*$/.test(path)) {
        answerError(AppError.validation([{ field: 'sku', message: 'sku must be 1-64 characters of [A-Za-z0-9_.:-]' }]), reply as FastifyReply);
        return;
      }
      if (req.method === 'PUT' && /^\/admin\/locations\/[^/]*$/.test(path)) {
        answerError(AppError.validation([{ field: 'id', message: 'a location id must be 1-64 characters of [A-Za-z0-9_.:-]' }]), reply as FastifyReply);
        return;
      }
      if (req.method === 'PUT' && /^\/admin\/webhooks\/[^/]*$/.test(path)) {
        answerError(AppError.validation([{ field: 'name', message: 'name must be 1-64 characters of [A-Za-z0-9_.:-]' }]), reply as FastifyReply);
        return;
      }
      if ((req.method === 'GET' || req.method === 'HEAD') && page(req as FastifyRequest, reply as FastifyReply, path)) return;
      answerError(new AppError('NOT_FOUND', 'no such resource'), reply as FastifyReply);
    });
    void err;
  };
}

/**
 * Runs `next` when the request may go on, else answers the refusal. Synchronous unless the check
 * has to look a console session up, so the hot path never waits on a promise.
 */
function afterAuth(auth: Authenticator, req: FastifyRequest, reply: FastifyReply, route: string | undefined, next: () => void): void {
  const settle = (denied: Verdict) => {
    if (!denied) next();
    else if (denied.code === 'UNAUTHORIZED' && wantsSignInPage(req, route)) redirectToSignIn(reply);
    else sendProblem(reply, denied.code, denied.message, denied.extra);
  };
  const verdict = auth.check(req, reply, route);
  if (verdict instanceof Promise) verdict.then(settle, (err: unknown) => answerError(err, reply));
  else settle(verdict);
}

/** The queue dashboard is a page: a browser opening it without a session is sent to sign in (an API client still gets 401). */
const SIGN_IN_PAGE = '/console?next=%2Fadmin%2Fqueues';

function wantsSignInPage(req: FastifyRequest, route: string | undefined): boolean {
  const accept = req.headers.accept;
  return (req.method === 'GET' || req.method === 'HEAD') && route !== undefined && /^\/admin\/queues(?:\/(?!api\/)|$)/.test(route) && typeof accept === 'string' && accept.includes('text/html');
}

function redirectToSignIn(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('location', SIGN_IN_PAGE).code(302).send();
}

/**
 * A request HTTP/1.1 framing refuses (http-server.ts, `malformedRequest`: no Host, an unsupported
 * Expect) is answered before anything else, authorization included, and its connection closed: a
 * client that sent an expectation may or may not send the body next.
 */
export function refuseMalformed(req: FastifyRequest, reply: FastifyReply): boolean {
  const refusal = malformedRequest(req.raw);
  if (!refusal) return false;
  reply.header('connection', 'close');
  answerError(refusal, reply);
  return true;
}
