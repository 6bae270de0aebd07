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
    /** The whole problem+json answer: its extra members (errors, reason, sku…). */
    readonly problem: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface Session {
  csrfToken: string;
  expiresAt: string;
  operator?: string | null;
  /** The signed-in operator's role; null with the admin token. */
  role?: string | null;
  /** What the session may do (`admin`: everything). */
  scopes?: string[];
}

let csrfToken: string | undefined;
let scopes: readonly string[] = [];
let onSessionLost: () => void = () => undefined;

export function setSession(session: Session | undefined): void {
  csrfToken = session?.csrfToken;
  scopes = session?.scopes ?? [];
}

/**
 * Whether the session holds a scope (`admin` holds every one): the page offers only what the API
 * would allow, and the API refuses the rest (403) anyway.
 */
export function can(scope: string): boolean {
  return scopes.includes(scope) || scopes.includes('admin');
}

/** Called when an admin call answers 401: the session expired or was ended elsewhere. */
export function whenSessionLost(handler: () => void): void {
  onSessionLost = handler;
}

const SAFE = new Set(['GET', 'HEAD']);

/** A body sent as it is (a file's text), with its media type, instead of as JSON. */
export class RawBody {
  constructor(
    readonly text: string,
    readonly type: string,
  ) {}
}

/** `extra` adds request headers (an Idempotency-Key). */
export async function api<T>(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<T> {
  const headers: Record<string, string> = { ...extra, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = body instanceof RawBody ? body.type : 'application/json';
  if (!SAFE.has(method) && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : body instanceof RawBody ? body.text : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
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
  const problem = (parsed ?? {}) as { code?: string; detail?: string; title?: string } & Record<string, unknown>;
  const retryAfter = Number(res.headers.get('retry-after')) || undefined;
  const error = new ApiError(res.status, problem.code ?? `HTTP_${res.status}`, problem.detail ?? problem.title ?? `The service answered ${res.status}.`, retryAfter, problem);
  if (res.status === 401 && path.startsWith('/admin')) {
    setSession(undefined);
    onSessionLost();
  }
  throw error;
}

/** A path segment, encoded. */
export const seg = (value: string): string => encodeURIComponent(value);
