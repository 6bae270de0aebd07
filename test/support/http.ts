import { ADMIN_TOKEN } from './env.js';

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A tiny client over fetch: the tests speak HTTP to the real process, nothing in between. */
export function client(base: string) {
  async function send<T = any>(method: string, path: string, opts: { body?: unknown; raw?: string; headers?: Record<string, string>; admin?: boolean } = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    if (opts.raw !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON (metrics, HTML): keep the text
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }
  return {
    send,
    get: <T = any>(path: string, admin = false) => send<T>('GET', path, { admin }),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => send<T>('POST', path, { body, headers }),
    admin: <T = any>(method: string, path: string, body?: unknown) => send<T>(method, path, { body, admin: true }),
    /** POST /orders with an Idempotency-Key. */
    order: <T = any>(key: string, body: unknown) => send<T>('POST', '/orders', { body, headers: { 'idempotency-key': key } }),
    putSku: (sku: string, onHand: number, priceMinor = 1000, currency = 'USD') =>
      send('PUT', `/admin/inventory/${sku}`, { body: { name: sku, priceMinor, currency, onHand }, admin: true }),
  };
}

export type Client = ReturnType<typeof client>;

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
