import { Dispatcher, errors, Pool } from 'undici';
import { LinkedList } from '../common/linked-list.js';
import { FINAL_REFUSALS, GatewayPayment, GatewayRefund, GatewayRejectedError, GatewayUnavailableError } from './gateway.types.js';

export interface HttpAnswer {
  status: number;
  body: unknown;
}

/**
 * Classifies one HTTP exchange with the gateway: `accept` lists the statuses that carry a final
 * answer; a final refusal (400, 401, 403, 404, 422) means the request itself was rejected and
 * nothing happened; anything else (408, 409, 425, 429, 5xx, an unexpected status) leaves the
 * outcome unknown.
 */
export function classify(answer: HttpAnswer, accept: number[]): HttpAnswer {
  if (accept.includes(answer.status)) return answer;
  if (FINAL_REFUSALS.includes(answer.status)) {
    throw new GatewayRejectedError(answer.status, `gateway refused the request with ${answer.status}: ${describe(answer.body)}`);
  }
  throw new GatewayUnavailableError('error', `gateway answered ${answer.status}`);
}

/** What the gateway said, short, for the timeline; never the request (it may carry a token). */
function describe(body: unknown): string {
  const b = body as { error?: unknown; message?: unknown } | null;
  const text = typeof b?.message === 'string' ? b.message : typeof b?.error === 'string' ? b.error : JSON.stringify(body);
  return String(text).slice(0, 200);
}

/**
 * The raw protocol over undici: one keep-alive connection pool to the gateway's origin, and the
 * client's own timeout, PAYMENT_TIMEOUT_MS for the whole call — waiting for a free connection,
 * connecting, the headers and the body together (Deadlines). The pool's header, body and connect
 * timeouts end the common hangs exactly on time. Not an AbortSignal per call: a timer-backed
 * signal, its listener and its GC-time cleanup cost about a fifth of what a whole gateway call
 * costs the service.
 */
export class GatewayHttp {
  private readonly pool: Pool;
  private readonly deadlines: Deadlines;

  /** `baseUrl`'s origin: every path of the protocol is absolute (/payments…), as before. */
  constructor(
    baseUrl: string,
    private readonly timeoutMs: number,
  ) {
    this.pool = new Pool(new URL(baseUrl).origin, {
      connections: 128,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connectTimeout: timeoutMs,
    });
    this.deadlines = new Deadlines(timeoutMs);
  }

  async charge(
    body: { amountMinor: number; currency: string; reference: string; paymentToken?: string },
    key: string,
    requestId?: string,
  ): Promise<HttpAnswer> {
    return classify(await this.send('POST', '/payments', body, key, requestId), [201, 402]);
  }

  /** An authorization: POST /payments with capture: false (201 authorized, 402 declined). */
  async authorize(
    body: { amountMinor: number; currency: string; reference: string; paymentToken?: string },
    key: string,
    requestId?: string,
  ): Promise<HttpAnswer> {
    return classify(await this.send('POST', '/payments', { ...body, capture: false }, key, requestId), [201, 402]);
  }

  /** 200 captured; 409 with the payment when it can no longer be captured. */
  async capture(paymentId: string, amountMinor: number, key: string, requestId?: string): Promise<HttpAnswer> {
    return classify(await this.send('POST', `/payments/${encodeURIComponent(paymentId)}/capture`, { amountMinor }, key, requestId), [200, 409]);
  }

  /** 200 voided; 409 with the payment once captured (or expired: the hold is gone either way). */
  async void(paymentId: string, key: string, requestId?: string): Promise<HttpAnswer> {
    return classify(await this.send('POST', `/payments/${encodeURIComponent(paymentId)}/void`, {}, key, requestId), [200, 409]);
  }

  async listByReference(reference: string, requestId?: string): Promise<GatewayPayment[]> {
    const answer = classify(await this.send('GET', `/payments?reference=${encodeURIComponent(reference)}`, undefined, undefined, requestId), [200]);
    const data = (answer.body as { data?: unknown })?.data;
    if (!Array.isArray(data)) throw new GatewayUnavailableError('error', 'gateway lookup answered without data');
    return data as GatewayPayment[];
  }

  async refund(paymentId: string, amountMinor: number, key: string): Promise<GatewayRefund> {
    const answer = classify(await this.send('POST', `/payments/${encodeURIComponent(paymentId)}/refunds`, { amountMinor }, key), [200, 201]);
    return answer.body as GatewayRefund;
  }

  async close(): Promise<void> {
    this.deadlines.stop();
    await this.pool.close().catch(() => undefined);
  }

  private async send(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string, requestId?: string): Promise<HttpAnswer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    if (requestId) headers['x-request-id'] = requestId;
    try {
      const res = await exchange(this.pool, this.deadlines, { path, method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: res.text ? safeJson(res.text) : null };
    } catch (err) {
      if (err instanceof CallTimeoutError || err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError || err instanceof errors.ConnectTimeoutError) {
        throw new GatewayUnavailableError('timeout', `no answer from the gateway within ${this.timeoutMs} ms`);
      }
      throw new GatewayUnavailableError('error', `gateway unreachable: ${(err as Error)?.message ?? String(err)}`);
    }
  }
}

/** A call that outlived PAYMENT_TIMEOUT_MS as a whole. */
class CallTimeoutError extends Error {}

interface Pending {
  deadline: number;
  /** Ends the call: aborts it on its connection if it has one, and fails its promise. */
  expire(): void;
}

/**
 * The whole-call timeout without a timer per call: calls wait in arrival order (all have the same
 * timeout, so that is deadline order), and one ticking timer — running only while a call is in
 * flight, unref'd — ends those past their deadline, at most a tick (a tenth of the timeout, at
 * least 10 ms) late. The calls in flight are a linked list, not a Set: a Set's deleted entries
 * were promoted to the old generation with each call's closure (see LinkedList).
 */
class Deadlines {
  private readonly pending = new LinkedList<Pending>();
  private timer: NodeJS.Timeout | undefined;
  private readonly tickMs: number;

  constructor(private readonly timeoutMs: number) {
    this.tickMs = Math.max(10, Math.min(250, Math.floor(timeoutMs / 10)));
  }

  /** Watches a call; the returned function forgets it (it ended by itself). */
  watch(expire: () => void): () => void {
    const node = this.pending.push({ deadline: performance.now() + this.timeoutMs, expire });
    this.timer ??= setInterval(() => this.sweep(), this.tickMs).unref();
    return () => this.pending.remove(node);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sweep(): void {
    const now = performance.now();
    while (this.pending.first && this.pending.first.deadline <= now) this.pending.shift()!.expire();
    if (this.pending.empty) this.stop();
  }
}

/**
 * One request on the pool, its answer gathered as text. undici's dispatch with a handler of our
 * own rather than its `request`, which wraps every answer's body in a Readable stream, at a cost
 * per call, for a body of a few hundred bytes read whole anyway. Past its deadline the call
 * fails with CallTimeoutError; a request still waiting for a connection then is never sent.
 */
function exchange(pool: Pool, deadlines: Deadlines, options: Dispatcher.DispatchOptions): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let expired = false;
    let controller: { abort(reason: Error): void } | undefined;
    const chunks: Buffer[] = [];
    const forget = deadlines.watch(() => {
      expired = true;
      const err = new CallTimeoutError('the call outlived its timeout');
      controller?.abort(err);
      reject(err);
    });
    pool.dispatch(options, {
      onRequestStart: (c) => {
        controller = c;
        if (expired) c.abort(new CallTimeoutError('the call outlived its timeout before it was sent'));
      },
      onResponseStart: (_controller, statusCode) => {
        status = statusCode;
      },
      onResponseData: (_controller, chunk) => {
        chunks.push(chunk);
      },
      onResponseEnd: () => {
        forget();
        resolve({ status, text: chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8') });
      },
      onResponseError: (_controller, err) => {
        forget();
        reject(err);
      },
    });
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { raw: text.slice(0, 200) };
  }
}
