import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { Counter } from 'prom-client';
import { UUID_SOURCE } from '../common/uuid.js';
import { toProblem } from '../common/errors.js';
import { requestContext } from '../logging/logger.js';
import { ResponseRecorder } from './http-setup.js';
import { requestIdOf } from './http-server.js';
import { BODY_LIMIT, parseJsonBody } from './json-body.js';
import { BUSY_RETRY_AFTER_S, PROBLEM_TYPE, problemOf, retryAfterOf } from './problem.js';

/** What a checkout route answers (orders/order-answers.ts): a status and JSON text. */
export interface FastAnswer {
  status: number;
  body: string;
  problem: boolean;
}

/** The two routes the fast path serves, from a request's parts to its answer. */
export interface FastRoutes {
  tryOrder(key: string | string[] | undefined, body: unknown, requestId: string): Promise<FastAnswer>;
  confirmOrder(id: string, body: unknown, requestId: string): Promise<FastAnswer>;
}

const CONFIRM = new RegExp(`^/orders/(${UUID_SOURCE})/confirm$`);
const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_JSON_TYPE = `${PROBLEM_TYPE}; charset=utf-8`;
/** While the server closes: how often connections that have gone idle are ended. */
const IDLE_CHECK_MS = 50;

/** The options Fastify hands a server factory, as it would apply them to a server of its own. */
interface ServerOptions {
  http?: http.ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket?: number;
}

/**
 * The checkout's two hot routes, POST /orders (Try) and POST /orders/{id}/confirm, answered
 * straight from node:http before Fastify and Nest see the request. A sold-out refusal spends most
 * of its CPU in the HTTP layers, and Fastify's request and reply objects, its hooks and Nest's
 * router and pipes are a fifth of it (BENCHMARKS.md, "Lessons").
 *
 * It is the same contract, not a second implementation of it: the answers come from the same
 * OrderAnswers the Nest controller calls, bodies go through the same JSON reader and input rules,
 * errors through the same problem mapping, and every answer through the same recorder (latency
 * metric and access-log line, whose client address is http/client-address.ts's, as everywhere),
 * with the request's id in the log context. Only a plain request
 * takes this way — a POST with a body whose length is declared and within the limit (or none),
 * no query, a Host, no `Expect` — while the rate limiter is off and the server is not closing;
 * anything else (a chunked body, a body over 64 KiB, the rate limit, a request HTTP/1.1 refuses)
 * goes to Fastify, as every other route does. The server keeps Fastify's options, its 30 s request
 * timeout among them (http/http-server.ts). From Fastify's close on, every request that still
 * arrives (on a connection busy when the close began) is answered 503 here, as problem+json:
 * Fastify's own 503 for it is bare JSON.
 */
export class FastPath {
  private routes?: FastRoutes;
  private record?: ResponseRecorder;
  private served?: { tryOrder: Counter.Internal; confirmOrder: Counter.Internal };
  private closing = false;
  private server?: http.Server;

  /** For FastifyAdapter's `serverFactory`: the server Fastify would have made, with this path in front. */
  readonly serverFactory = (handler: http.RequestListener, options: ServerOptions): http.Server => {
    const server = http.createServer(options.http ?? {}, (req, res) => {
      if (this.closing) unavailable(req, res);
      else if (!this.take(req, res)) handler(req, res);
    });
    this.server = server;
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket && options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };

  /**
   * From Fastify's close on, requests are refused 503 (main.ts turns Fastify's own 503 off), and
   * every connection is ended as soon as it is idle. Fastify ends the idle ones when its close
   * begins; a client's keep-alive connection busy then (a Confirm at the gateway) would otherwise
   * hold the process until the client let go of it — 20 s after SIGTERM, measured.
   */
  refuseWhenClosing(fastify: FastifyInstance): void {
    fastify.addHook('preClose', (done) => {
      this.closing = true;
      const server = this.server;
      if (server) {
        const idle = setInterval(() => server.closeIdleConnections(), IDLE_CHECK_MS).unref();
        server.once('close', () => clearInterval(idle));
      }
      done();
    });
  }

  /** Turns the path on once the application is built. */
  install(routes: FastRoutes, record: ResponseRecorder, served: Counter<'route'>): void {
    this.routes = routes;
    this.record = record;
    this.served = { tryOrder: served.labels('/orders'), confirmOrder: served.labels('/orders/:id/confirm') };
  }

  /** Takes the request if it is one of the two routes in its plain form; false leaves it to Fastify. */
  private take(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    if (!this.routes || req.method !== 'POST') return false;
    const url = req.url ?? '';
    let confirmId: string | undefined;
    if (url !== '/orders') {
      const m = url.length === 52 ? CONFIRM.exec(url) : null;
      if (!m) return false;
      confirmId = m[1];
    }
    const headers = req.headers;
    if (headers['transfer-encoding'] !== undefined || headers.expect !== undefined || headers.host === undefined) return false;
    const length = headers['content-length'];
    if (length !== undefined && !(/^\d{1,6}$/.test(length) && Number(length) <= BODY_LIMIT)) return false;

    const started = performance.now();
    const requestId = requestIdOf(req);
    (confirmId === undefined ? this.served!.tryOrder : this.served!.confirmOrder).inc();
    const route = confirmId === undefined ? '/orders' : '/orders/:id/confirm';
    // The body's bytes, decoded once at the end (as UTF-8, a broken sequence as U+FFFD, like a
    // string decoder would): a body comes in one chunk nearly always, and a stream decoder per
    // request costs more than the body.
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    req.on('data', (chunk: Buffer) => {
      if (first === undefined) first = chunk;
      else (more ??= [first]).push(chunk);
    });
    req.on('error', () => undefined); // the client went away mid-body: nobody to answer
    req.on('end', () =>
      requestContext.run({ reqId: requestId }, () => {
        const text = more ? Buffer.concat(more).toString('utf8') : (first?.toString('utf8') ?? '');
        void this.answer(confirmId, text, req, res, requestId, route, started);
      }),
    );
    return true;
  }

  /** Answers the request, then records it (latency, access log). */
  private async answer(
    confirmId: string | undefined,
    text: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    requestId: string,
    route: string,
    started: number,
  ): Promise<void> {
    let answer: FastAnswer;
    let retryAfter: number | undefined;
    try {
      const body = parseJsonBody(text);
      answer = confirmId === undefined ? await this.routes!.tryOrder(req.headers['idempotency-key'], body, requestId) : await this.routes!.confirmOrder(confirmId, body, requestId);
    } catch (err) {
      const p = problemOf(err);
      retryAfter = retryAfterOf(err, p);
      answer = { status: p.status, body: JSON.stringify(p), problem: true };
    }
    if (!res.destroyed) {
      // One object of a fixed shape: a spread here made every answer's headers a dictionary.
      const headers: http.OutgoingHttpHeaders = {
        'x-request-id': requestId,
        'content-type': answer.problem ? PROBLEM_JSON_TYPE : JSON_TYPE,
        'content-length': Buffer.byteLength(answer.body),
      };
      if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
      res.writeHead(answer.status, headers);
      res.end(answer.body);
    }
    this.record!('POST', route, req.url ?? '', requestId, answer.status, performance.now() - started, confirmId?.toLowerCase(), req);
  }
}

/** A request that arrives while the server closes: 503, and the connection closed. */
function unavailable(req: http.IncomingMessage, res: http.ServerResponse): void {
  const body = JSON.stringify(toProblem('SERVICE_UNAVAILABLE', 'the service is shutting down; send the request again'));
  res.writeHead(503, {
    'x-request-id': requestIdOf(req),
    'content-type': PROBLEM_JSON_TYPE,
    'content-length': Buffer.byteLength(body),
    'retry-after': String(BUSY_RETRY_AFTER_S),
    connection: 'close',
  });
  res.end(body);
}
