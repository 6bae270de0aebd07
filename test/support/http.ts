import { randomInt } from 'node:crypto';
import type { Agent } from 'undici';
import { ADMIN_TOKEN } from './env.js';

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * A loopback address of its own (127.x.y.z, never 127.0.0.1): a client connecting from it is
 * another client address to the service (the rate limit, the credential throttle), so a test that
 * presents wrong credentials on purpose throttles nobody else.
 */
export function loopbackAddress(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

type Init = { method: string; headers: Record<string, string>; body?: string };

/**
 * undici's own package, for requests from a chosen local address; loaded on first use. Every test
 * file loads its modules afresh, and most never need this one (plain requests use the built-in
 * fetch).
 */
let undici: Promise<typeof import('undici')> | undefined;
const loadUndici = () => (undici ??= import('undici'));

/** fetch from a local address of its own (one connection, closed after the answer). */
export async function fetchFromAddress(url: string, init: Init, address = loopbackAddress()): Promise<Response> {
  const { Agent, fetch: fetchVia } = await loadUndici();
  const dispatcher = new Agent({ localAddress: address });
  try {
    const res = await fetchVia(url, { ...init, dispatcher });
    const text = await res.text(); // read before the agent closes
    const empty = [101, 204, 205, 304].includes(res.status);
    return new Response(empty ? null : text, { status: res.status, headers: [...(res.headers as unknown as Iterable<[string, string]>)] });
  } finally {
    void dispatcher.close();
  }
}

/**
 * A tiny client over fetch: the tests speak HTTP to the real process, nothing in between. `from`:
 * the local address its connections come from (loopbackAddress), or `anywhere`: each request from
 * an address of its own — for requests that present wrong credentials on purpose, so the credential
 * throttle (5 wrong ones per address) never stands in the way of what a test looks at.
 */
export function client(base: string, opts: { from?: string | 'anywhere' } = {}) {
  const from = opts.from && opts.from !== 'anywhere' ? opts.from : undefined;
  let dispatcher: Agent | undefined;
  const fetchFrom = async (url: string, init: Init): Promise<Response> => {
    if (opts.from === 'anywhere') return fetchFromAddress(url, init);
    if (!from) return fetch(url, init);
    const { Agent, fetch: fetchVia } = await loadUndici();
    dispatcher ??= new Agent({ localAddress: from });
    return fetchVia(url, { ...init, dispatcher }) as unknown as Promise<Response>;
  };
  async function send<T = any>(method: string, path: string, opts: { body?: unknown; raw?: string; headers?: Record<string, string>; admin?: boolean } = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    if (opts.raw !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetchFrom(`${base}${path}`, { method, headers, body });
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

/**
 * Sends `call` again while it answers 503 SERVICE_UNAVAILABLE (the database busy: a lock waited
 * past lock_timeout on a loaded machine), after its Retry-After, as the contract asks a client to —
 * at most `attempts` times. Such a 503 changed nothing, so the same request (same Idempotency-Key)
 * may go again. `onBusy` counts the retries for the spec's report.
 */
export async function resendWhileBusy<T = any>(call: () => Promise<Answer<T>>, onBusy: () => void = () => {}, attempts = 5): Promise<Answer<T>> {
  for (let attempt = 1; ; attempt++) {
    const res = await call();
    if (res.status !== 503 || (res.body as { code?: string } | null)?.code !== 'SERVICE_UNAVAILABLE' || attempt === attempts) return res;
    onBusy();
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
  }
}

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
