import http from 'node:http';
import type { Socket } from 'node:net';
import { decideCharge, defaultFaults, mergeFaults, refusalStatus, validateFaultsPatch, validateScripts, type Faults } from './faults.js';
import { holdRoutes } from './holds.js';
import { error, HttpError, invalid, parseUrl, readJson, requireAmount, requireKey, requireObject, type Reply } from './http-io.js';
import { Ledger, type Payment } from './ledger.js';
import { LinkedList } from '../common/linked-list.js';

export interface Simulator {
  server: http.Server;
  ledger: Ledger;
  /** Live fault settings; mutated in place so this reference never goes stale. */
  faults: Faults;
  /** Ends hanging requests and open sockets, then closes the server. */
  close(): Promise<void>;
}

function parseCharge(body: unknown): { amountMinor: number; currency: string; reference: string; paymentToken?: string; capture: boolean } {
  const b = requireObject(body);
  const amountMinor = requireAmount(b.amountMinor);
  if (typeof b.currency !== 'string' || !/^[A-Z]{3}$/.test(b.currency)) {
    throw invalid('currency must be an ISO 4217 code such as "EUR"');
  }
  if (typeof b.reference !== 'string' || b.reference === '' || b.reference.length > 255) {
    throw invalid('reference must be a non-empty string of at most 255 chars');
  }
  if (b.paymentToken !== undefined && typeof b.paymentToken !== 'string') {
    throw invalid('paymentToken must be a string');
  }
  if (b.capture !== undefined && typeof b.capture !== 'boolean') {
    throw invalid('capture must be a boolean');
  }
  return { amountMinor, currency: b.currency, reference: b.reference, paymentToken: b.paymentToken, capture: b.capture !== false };
}

/** A charge answers 201 succeeded, an authorization 201 authorized; a decline 402. */
const paymentReply = (p: Payment, replayed: boolean): Reply => ({
  status: p.status === 'declined' ? 402 : 201,
  body: p,
  headers: replayed ? { 'idempotent-replayed': 'true' } : undefined,
});

export function createSimulatorServer(initialFaults: Partial<Faults> = {}): Simulator {
  const ledger = new Ledger();
  const faults: Faults = mergeFaults(defaultFaults(), initialFaults);
  const sockets = new Set<Socket>();
  /** Answers waiting out their latency or a fault (a list, not a Set: see LinkedList). */
  const timers = new LinkedList<NodeJS.Timeout>();

  const unavailable = (): Reply => error(503, 'unavailable', 'gateway unavailable (simulated)');
  const holds = holdRoutes(ledger, faults);

  async function charge(req: http.IncomingMessage): Promise<Reply> {
    const key = requireKey(req);
    const input = parseCharge(await readJson(req));
    ledger.countChargeRequest(input, !input.capture);
    // A charge's fingerprint as before; an authorization's also says so (one key, one kind of call).
    const fingerprint = JSON.stringify([input.amountMinor, input.currency, input.reference, input.paymentToken ?? null, ...(input.capture ? [] : ['authorize'])]);
    const record = (status: 'succeeded' | 'declined'): Payment => {
      const books = { amountMinor: input.amountMinor, currency: input.currency, reference: input.reference };
      if (input.capture) return ledger.charge(key, fingerprint, books, status);
      return ledger.authorize(key, fingerprint, books, status === 'succeeded' ? 'authorized' : 'declined', faults.authTtlMs);
    };
    // A refusal of the caller (401, 403: its credentials, its rights) comes before the gateway
    // looks at the request, as a real one authenticates before it replays a key it has answered.
    const callerRefusal = refusalStatus(faults.script[0] ?? 'ok');
    if (callerRefusal === 401 || callerRefusal === 403) {
      faults.script = faults.script.slice(1);
      return error(callerRefusal, 'refused', `simulated final refusal (${callerRefusal}); nothing charged`);
    }
    // Everything from lookup to recording is synchronous, so concurrent requests
    // with one key are serialised by the event loop and can never charge twice.
    const seen = ledger.lookupCharge(key, fingerprint);
    if (seen.kind === 'conflict') return error(422, 'idempotency_key_reused', 'Idempotency-Key was used with a different body');
    if (seen.kind === 'replay') return paymentReply(seen.value, true);

    const decision = decideCharge(faults, input.paymentToken);
    faults.script = decision.script;
    const refusal = refusalStatus(decision.mode);
    if (refusal !== undefined) return error(refusal, 'refused', `simulated final refusal (${refusal}); nothing charged`);
    switch (decision.mode) {
      case 'error':
        return error(500, 'internal_error', 'simulated failure before charging');
      case 'rate_limit':
        return error(429, 'rate_limited', 'simulated rate limit', { headers: { 'retry-after': '1' } });
      case 'hang':
        return error(504, 'gateway_timeout', 'simulated hang before charging', { delayMs: faults.hangMs });
      case 'decline':
        return paymentReply(record('declined'), false);
      case 'charge_then_error':
      case 'authorize_then_error':
        record('succeeded');
        return error(500, 'internal_error', 'simulated failure after charging');
      case 'charge_then_hang':
      case 'authorize_then_hang':
        return { ...paymentReply(record('succeeded'), false), delayMs: faults.hangMs };
      case 'slow_ok':
        // The charge is made when the wait is over; a duplicate that arrived meanwhile replays it.
        return {
          status: 201,
          body: null,
          delayMs: faults.hangMs,
          later: () => {
            const again = ledger.lookupCharge(key, fingerprint);
            if (again.kind === 'conflict') return error(422, 'idempotency_key_reused', 'Idempotency-Key was used with a different body');
            if (again.kind === 'replay') return paymentReply(again.value, true);
            return paymentReply(record('succeeded'), false);
          },
        };
      case 'ok':
      default:
        return paymentReply(record('succeeded'), false);
    }
  }

  async function refund(req: http.IncomingMessage, paymentId: string): Promise<Reply> {
    if (faults.refundDown) return unavailable();
    const key = requireKey(req);
    const amountMinor = requireAmount(requireObject(await readJson(req)).amountMinor);
    const fingerprint = JSON.stringify([paymentId, amountMinor]);
    const seen = ledger.lookupRefund(key, fingerprint);
    if (seen.kind === 'conflict') return error(422, 'idempotency_key_reused', 'Idempotency-Key was used with a different body');
    if (seen.kind === 'replay') return { status: 201, body: seen.value, headers: { 'idempotent-replayed': 'true' } };
    const result = ledger.refund(key, fingerprint, paymentId, amountMinor);
    if (result.ok) return { status: 201, body: result.refund };
    if (result.reason === 'payment_not_found') return error(404, 'payment_not_found', `no payment ${paymentId}`);
    if (result.reason === 'payment_declined') return error(422, 'payment_declined', 'cannot refund a payment that is not captured');
    return error(422, 'refund_exceeds_captured', 'refund exceeds the remaining captured amount');
  }

  async function control(req: http.IncomingMessage, path: string): Promise<Reply | undefined> {
    const route = `${req.method} ${path}`;
    if (route === 'GET /__control/faults') return { status: 200, body: faults };
    if (route === 'GET /__control/ledger') return { status: 200, body: ledger.snapshot() };
    if (route === 'PUT /__control/faults') {
      const result = validateFaultsPatch(await readJson(req));
      if (!result.ok) return error(400, 'invalid_faults', result.error);
      Object.assign(faults, mergeFaults(faults, result.patch));
      return { status: 200, body: faults };
    }
    if (route === 'POST /__control/script') {
      const result = validateScripts(await readJson(req));
      if (!result.ok) return error(400, 'invalid_script', result.error);
      Object.assign(faults, result.patch);
      return { status: 200, body: faults };
    }
    if (route === 'POST /__control/reset') {
      ledger.reset();
      Object.assign(faults, defaultFaults());
      return { status: 200, body: faults };
    }
    return undefined;
  }

  async function payments(req: http.IncomingMessage, url: { pathname: string; searchParams: URLSearchParams }): Promise<Reply | undefined> {
    const path = url.pathname;
    if (path !== '/payments' && !path.startsWith('/payments/')) return undefined;
    // "down" models a dead gateway: answer at once, touch nothing, not even the body.
    if (faults.down) return unavailable();
    if (path === '/payments' && req.method === 'POST') return charge(req);
    if (path === '/payments' && req.method === 'GET') {
      if (faults.lookupDown) return unavailable();
      const reference = url.searchParams.get('reference');
      if (!reference) return error(400, 'invalid_query', 'reference query parameter is required');
      return { status: 200, body: { data: ledger.paymentsByReference(reference) } };
    }
    const step = /^\/payments\/([^/]+)\/(refunds|capture|void)$/.exec(path);
    if (step && req.method === 'POST') {
      const paymentId = decodeURIComponent(step[1] as string);
      if (step[2] === 'refunds') return refund(req, paymentId);
      return step[2] === 'capture' ? holds.capture(req, paymentId) : holds.void(req, paymentId);
    }
    return undefined;
  }

  /**
   * Resolves false if the client went away (or the simulator closed) first. The plain latency of an
   * answer already decided only needs the timer (the writer checks that the client is still there);
   * a fault's wait also watches the client, because what it does afterwards (a late charge) must
   * not happen for a client that left.
   */
  function wait(res: http.ServerResponse, ms: number, watchClient: boolean): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(true);
    if (!watchClient) {
      return new Promise((resolve) => {
        const node = timers.push(
          setTimeout(() => {
            timers.remove(node);
            resolve(true);
          }, ms),
        );
      });
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(true), ms);
      const node = timers.push(timer);
      const onClose = (): void => finish(false);
      function finish(elapsed: boolean): void {
        clearTimeout(timer);
        timers.remove(node);
        res.off('close', onClose);
        resolve(elapsed);
      }
      res.on('close', onClose);
    });
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = parseUrl(req.url ?? '/');
    let reply: Reply | undefined;
    let isPayments = false;
    try {
      if (url.pathname === '/health' && req.method === 'GET') reply = { status: 200, body: { status: 'ok' } };
      else if (url.pathname.startsWith('/__control/')) reply = await control(req, url.pathname);
      else {
        reply = await payments(req, url);
        isPayments = reply !== undefined && reply.status !== 503;
      }
      reply ??= error(404, 'not_found', `no route ${req.method} ${url.pathname}`);
    } catch (err) {
      reply = err instanceof HttpError ? error(err.status, err.code, err.message) : error(500, 'internal_error', String(err));
      isPayments = url.pathname.startsWith('/payments');
    }
    const delayMs = (isPayments ? faults.latencyMs : 0) + (reply.delayMs ?? 0);
    if (!(await wait(res, delayMs, reply.delayMs !== undefined))) return;
    if (reply.later) reply = reply.later();
    if (res.destroyed || res.writableEnded) return;
    const payload = JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      ...reply.headers,
    });
    res.end(payload);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) res.writeHead(500).end();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  async function close(): Promise<void> {
    for (let timer = timers.shift(); timer; timer = timers.shift()) clearTimeout(timer);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    if (server.listening) await closed;
  }

  return { server, ledger, faults, close };
}
