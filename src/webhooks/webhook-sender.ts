import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';

/** The contract's deadline: a 2xx within this long, or the attempt failed. */
export const DELIVERY_TIMEOUT_MS = 5000;
/** Whatever a receiver answers is read and dropped, up to this much. */
const DRAIN_LIMIT = 64 * 1024;

export type SendResult = { ok: true; status: number } | { ok: false; error: string };

export interface Message {
  /** The webhook-id: the same on every attempt. */
  id: string;
  /** The exact bytes sent and signed, the same on every attempt. */
  body: string;
}

/**
 * The Standard Webhooks signature headers of one attempt, from the reference library (the one a
 * receiver verifies with): webhook-timestamp is this attempt's time, the signature covers
 * "<id>.<timestamp>.<body>" with the key after whsec_.
 */
export function signedHeaders(secret: string, msg: Message, at: Date = new Date()): Record<string, string> {
  return {
    'webhook-id': msg.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(msg.id, at, msg.body),
  };
}

/** Why an attempt failed, for lastError and the log: no URL (it may carry a token), no secret. */
function reasonOf(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const code = e?.code ?? e?.cause?.code;
  if (code) return `request failed: ${code}`;
  return `request failed: ${String(e?.message ?? err).slice(0, 200)}`;
}

/**
 * POSTs signed events. Redirects are not followed (a 3xx is a failed attempt): the operator gave
 * this URL, and a redirect must not carry a signed event somewhere else.
 */
export class WebhookSender {
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 32 });

  constructor(private readonly timeoutMs = DELIVERY_TIMEOUT_MS) {}

  async send(url: string, secret: string, msg: Message): Promise<SendResult> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'tcc-inventory-webhooks/1', ...signedHeaders(secret, msg) },
        body: msg.body,
        dispatcher: this.agent,
        signal,
      });
      await res.body.dump({ limit: DRAIN_LIMIT }).catch(() => undefined);
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, status: res.statusCode };
      if (res.statusCode >= 300 && res.statusCode < 400) return { ok: false, error: `HTTP ${res.statusCode} (redirects are not followed)` };
      return { ok: false, error: `HTTP ${res.statusCode}` };
    } catch (err) {
      return { ok: false, error: reasonOf(err, this.timeoutMs) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}
