/**
 * The admin API as the page calls it: same-origin fetches that carry the HttpOnly session cookie,
 * and on every state change the session's anti-CSRF token (held in memory only, never stored).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Retry-After, in seconds, when the answer carried one (429). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export interface Session {
  csrfToken: string;
  expiresAt: string;
  operator?: string | null;
}

let csrfToken: string | undefined;
let onSessionLost: () => void = () => undefined;

export function setSession(session: Session | undefined): void {
  csrfToken = session?.csrfToken;
}

/** Called when an admin call answers 401: the session expired or was ended elsewhere. */
export function whenSessionLost(handler: () => void): void {
  onSessionLost = handler;
}

const SAFE = new Set(['GET', 'HEAD']);

/** `extra` adds request headers (an Idempotency-Key). */
export async function api<T>(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<T> {
  const headers: Record<string, string> = { ...extra, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (!SAFE.has(method) && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service cannot be reached. Check the connection and try again.');
  }
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: described by the status below
  }
  if (res.ok) return parsed as T;
  const problem = (parsed ?? {}) as { code?: string; detail?: string; title?: string };
  const retryAfter = Number(res.headers.get('retry-after')) || undefined;
  const error = new ApiError(res.status, problem.code ?? `HTTP_${res.status}`, problem.detail ?? problem.title ?? `The service answered ${res.status}.`, retryAfter);
  if (res.status === 401 && path.startsWith('/admin')) {
    setSession(undefined);
    onSessionLost();
  }
  throw error;
}

/** A path segment, encoded. */
export const seg = (value: string): string => encodeURIComponent(value);
