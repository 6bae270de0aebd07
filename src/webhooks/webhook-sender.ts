import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';

/** The contract's deadline: a 2xx within this long, or the attempt failed (WEBHOOK_DELIVERY_TIMEOUT_MS's default). */
export const DELIVERY_TIMEOUT_MS = 5000;

/**
 * How long a claimed delivery is left to its job before it is claimed again, and that job's lock:
 * a few attempts' worth. Claiming again an attempt whose job still waits or runs adds nothing (same job id).
 */
export function deliveryLeaseMs(timeoutMs: number): number {
  return 3 * timeoutMs;
}

/** Whatever a receiver answers is read and dropped, up to this much. */
const DRAIN_LIMIT = 64 * 1024;

/** How much of a failed attempt's answer is kept for the operator (characters). */
export const RESPONSE_KEPT = 200;

/**
 * A failed attempt says what happened (`error`) and, when the receiver answered, its HTTP status
 * and the start of its body, for the operator to see why it fails.
 */
export type SendResult = { ok: true; status: number } | { ok: false; error: string; status?: number; body?: string };

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

/** Control, zero-width and direction-changing characters: a body shown to an operator shows none. */
const HIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029]+/gu;

/**
 * The first RESPONSE_KEPT characters of an answer's body, as plain text on one line; the rest is
 * not read (the connection closes instead of draining a large body).
 */
async function startOf(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_KEPT * 4) break; // enough bytes for RESPONSE_KEPT characters of UTF-8
    }
  } catch {
    // the receiver hung up mid-body: keep what came
  }
  body.destroy();
  const text = Buffer.concat(chunks).toString('utf8').replace(HIDDEN, ' ').replace(/\s+/g, ' ').trim();
  return Array.from(text).slice(0, RESPONSE_KEPT).join('');
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
      const status = res.statusCode;
      if (status >= 200 && status < 300) {
        await res.body.dump({ limit: DRAIN_LIMIT }).catch(() => undefined);
        return { ok: true, status };
      }
      const body = await startOf(res.body);
      if (status >= 300 && status < 400) return { ok: false, error: `HTTP ${status} (redirects are not followed)`, status, body };
      return { ok: false, error: `HTTP ${status}`, status, body };
    } catch (err) {
      return { ok: false, error: reasonOf(err, this.timeoutMs) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}
