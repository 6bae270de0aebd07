import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, Problem, toProblem } from '../common/errors.js';

/**
 * What every HTTP server of the service (PORT, OPS_PORT) does at the node:http level, before
 * Fastify or the fast path see a request: how long a request may take to arrive, and the answers
 * node:http would otherwise give bare (a 400 without Host, a 417 for an unknown Expect, a 408) or
 * not at all (CONNECT). Every answer is problem+json with X-Request-Id.
 */

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is valid, else a new one. */
export function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The contract's limit: a request, headers and body, must arrive in full within 30 s (else 408,
 * connection closed). REQUEST_TIMEOUT_MS (internal) sets it; only the tests shorten it.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/**
 * node:http looks for requests past their time only this often (30 s by default, which made the
 * 408 arrive after up to 60 s). Each look walks the active connections only, so 1 s is cheap.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * Fastify's server options for these limits, and its clientErrorHandler. `requestTimeout` is
 * Fastify's own (it sets it on the server it makes, or hands it to a server factory); `http` goes
 * to http.createServer, where the same requestTimeout also makes node:http's headersTimeout
 * (min(60 s, requestTimeout)) the same. A missing Host is answered by `malformedRequest`, not by
 * node:http's bare 400.
 */
export function serverLimits(requestTimeoutMs: number = REQUEST_TIMEOUT_MS) {
  return {
    requestTimeout: requestTimeoutMs,
    http: { requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, requestTimeoutMs), requireHostHeader: false } satisfies http.ServerOptions,
    clientErrorHandler: (err: Error & { code?: string }, socket: Duplex) => clientError(err, socket, requestTimeoutMs),
  };
}

/** node:http's test for the one expectation it supports. */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * A request HTTP/1.1 framing refuses but node:http lets through (with SERVER_LIMITS and
 * `answerWhatHttpDrops`): an HTTP/1.1 request without Host, an Expect other than 100-continue.
 * The contract fixes one status per code, so both are 400 VALIDATION_FAILED naming the header (not
 * 417 for Expect); the caller answers it and closes the connection.
 */
export function malformedRequest(req: http.IncomingMessage): AppError | undefined {
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
    return AppError.validation([{ field: 'Host', message: 'an HTTP/1.1 request must carry a Host header' }]);
  }
  const expect = req.headers.expect;
  if (expect !== undefined && !CONTINUE.test(expect)) {
    return AppError.validation([{ field: 'Expect', message: 'the only expectation supported is 100-continue' }]);
  }
  return undefined;
}

/**
 * Once the server is made: an unsupported Expect goes to the request handler like any request
 * (which answers `malformedRequest`'s 400), not node:http's bare 417; CONNECT, which node:http
 * hands over as a bare socket (or drops), is answered 404 and the connection closed.
 */
export function answerWhatHttpDrops(server: http.Server): void {
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => server.emit('request', req, res));
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    writeRawProblem(socket, requestIdOf(req), toProblem('NOT_FOUND', 'CONNECT is not served here'));
  });
}

/** A problem+json answer written straight to a socket whose HTTP framing is lost, then the connection closed. */
function writeRawProblem(socket: Duplex, requestId: string, problem: Problem): void {
  const body = JSON.stringify(problem);
  // As node:http answers these itself: written, then the socket destroyed (what is written is flushed first).
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\nConnection: close\r\nX-Request-Id: ${requestId}\r\n` +
        `Content-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** node:http's own state of a connection: the request being read, the response being written. */
interface Connection {
  parser?: { incoming?: http.IncomingMessage | null } | null;
  _httpMessage?: http.ServerResponse | null;
}

/** A connection whose framing is lost and whose refusal is on its way (later parse errors of it are ignored). */
const REFUSING = Symbol('refusing');

/**
 * A request node:http gives up on before any handler answers it: one its parser refuses (a
 * malformed request line, a header with a NUL, a bad Content-Length, headers over the limit, bytes
 * that are not HTTP after a complete request) is 400, one that did not arrive in full within
 * `requestTimeoutMs` is 408 REQUEST_TIMEOUT. Answered as problem+json like every other 4xx, then
 * the connection is closed (its framing is lost) — but only after every complete request before
 * it on the connection has had its own answer, in order: those were read whole and are being
 * served, and a client must learn what they did (an adjustment's answer lost would be retried and
 * applied twice). Closed without an answer of its own when the broken request has had its answer
 * already (a 401 or 404 given before its body, which never came) or one has begun.
 */
export function clientError(err: Error & { code?: string }, socket: Duplex, requestTimeoutMs: number = REQUEST_TIMEOUT_MS): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const connection = socket as Duplex & Connection & { [REFUSING]?: true };
  if (connection[REFUSING]) return;
  connection[REFUSING] = true;
  const { parser } = connection;
  // Headers read, body not (complete is set once the whole message is in).
  const reading = parser?.incoming && !parser.incoming.complete ? parser.incoming : undefined;
  const requestId = reading ? requestIdOf(reading) : randomUUID();
  afterCompleteAnswers(connection, reading, () => {
    if (socket.destroyed) return;
    const response = connection._httpMessage;
    if (response?.headersSent || (reading && !response)) {
      socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      writeRawProblem(socket, requestId, toProblem('REQUEST_TIMEOUT', `the request did not arrive in full within ${requestTimeoutMs / 1000} s`));
      return;
    }
    const detail = err.code === 'HPE_HEADER_OVERFLOW' ? 'the request headers are too large' : 'the request is not valid HTTP/1.1';
    writeRawProblem(socket, requestId, toProblem('VALIDATION_FAILED', detail, { errors: [{ field: 'request', message: detail }] }));
  });
}

/**
 * Runs `then` once the connection writes no answer of a complete request any more: node:http
 * writes the answers of pipelined requests one after the other (the one being written is the
 * connection's `_httpMessage`, the next is assigned when it finishes), so this waits for each in
 * turn. `reading`'s own answer (the broken request's, when a handler gave one before its body) is
 * not waited for: that request will never be complete.
 */
function afterCompleteAnswers(connection: Connection & Duplex, reading: http.IncomingMessage | undefined, then: () => void): void {
  const current = connection._httpMessage;
  if (!current || connection.destroyed || (reading && current.req === reading)) {
    then();
    return;
  }
  // 'close' comes after node:http has moved on to the next answer (or the connection is gone).
  current.once('close', () => afterCompleteAnswers(connection, reading, then));
}
