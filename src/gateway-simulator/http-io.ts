import type http from 'node:http';

// The simulator's HTTP plumbing: reading a request's parts, and the answer it is given.

const BODY_LIMIT = 64 * 1024;
const MAX_KEY_LENGTH = 255;

export class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Extra wait before answering; hang modes use it to outlive client timeouts. */
  delayMs?: number;
  /** Decides the answer once the wait is over (a charge that lands late). */
  later?: () => Reply;
}

export const error = (status: number, code: string, message: string, extra: Partial<Reply> = {}): Reply => ({
  status,
  body: { error: code, message },
  ...extra,
});

export function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number(req.headers['content-length'] ?? 0) > BODY_LIMIT;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) tooLarge = true;
      // Keep draining instead of destroying so the 413 can still be delivered.
      if (!tooLarge) chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      if (tooLarge) return reject(new HttpError(413, 'body_too_large', `body exceeds ${BODY_LIMIT} bytes`));
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new HttpError(400, 'malformed_json', 'request body is not valid JSON'));
      }
    });
  });
}

export function requireKey(req: http.IncomingMessage): string {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_KEY_LENGTH) {
    throw new HttpError(400, 'missing_idempotency_key', `Idempotency-Key header is required (1-${MAX_KEY_LENGTH} chars)`);
  }
  return key;
}

export const invalid = (message: string): HttpError => new HttpError(400, 'invalid_body', message);

export function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  throw invalid('body must be a JSON object');
}

export function requireAmount(value: unknown): number {
  if (Number.isSafeInteger(value) && (value as number) > 0) return value as number;
  throw invalid('amountMinor must be a positive integer');
}

const NO_QUERY = new URLSearchParams();

/**
 * The path and query of a request target. A plain path (no query, no escapes, no dot segments: a
 * charge) is taken as it is; anything else is parsed as a URL, which normalises it.
 */
export function parseUrl(target: string): { pathname: string; searchParams: URLSearchParams } {
  if (target.startsWith('/') && !/[?%#]|\/\./.test(target)) return { pathname: target, searchParams: NO_QUERY };
  const url = new URL(target, 'http://simulator.local');
  return { pathname: url.pathname, searchParams: url.searchParams };
}
