import { GatewayPayment, GatewayRefund, GatewayRejectedError, GatewayUnavailableError } from './gateway.types.js';

export interface HttpAnswer {
  status: number;
  body: unknown;
}

/**
 * Classifies one HTTP exchange with the gateway. A timeout, a 429, a 5xx or a broken connection
 * is an unknown outcome (thrown as GatewayUnavailableError); `accept` lists the statuses that
 * carry a final answer; any other status is a final rejection of the request itself.
 */
export function classify(answer: HttpAnswer, accept: number[]): HttpAnswer {
  if (accept.includes(answer.status)) return answer;
  if (answer.status === 429 || answer.status >= 500) {
    throw new GatewayUnavailableError('error', `gateway answered ${answer.status}`);
  }
  throw new GatewayRejectedError(answer.status, `gateway refused the request with ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
}

/** The raw protocol over fetch, with the client's own timeout (opossum's timeout aborts nothing). */
export class GatewayHttp {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
  ) {}

  async charge(body: { amountMinor: number; currency: string; reference: string; paymentToken?: string }, key: string): Promise<HttpAnswer> {
    return classify(await this.send('POST', '/payments', body, key), [201, 402]);
  }

  async listByReference(reference: string): Promise<GatewayPayment[]> {
    const answer = classify(await this.send('GET', `/payments?reference=${encodeURIComponent(reference)}`), [200]);
    const data = (answer.body as { data?: unknown })?.data;
    if (!Array.isArray(data)) throw new GatewayUnavailableError('error', 'gateway lookup answered without data');
    return data as GatewayPayment[];
  }

  async refund(paymentId: string, amountMinor: number, key: string): Promise<GatewayRefund> {
    const answer = classify(await this.send('POST', `/payments/${encodeURIComponent(paymentId)}/refunds`, { amountMinor }, key), [200, 201]);
    return answer.body as GatewayRefund;
  }

  private async send(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<HttpAnswer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.text();
      return { status: res.status, body: text ? safeJson(text) : null };
    } catch (err) {
      const name = (err as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new GatewayUnavailableError('timeout', `no answer from the gateway within ${this.timeoutMs} ms`);
      }
      throw new GatewayUnavailableError('error', `gateway unreachable: ${(err as Error)?.message ?? String(err)}`);
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { raw: text.slice(0, 200) };
  }
}
