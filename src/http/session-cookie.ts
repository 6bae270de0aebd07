/** The operator console's session cookie: its name, how it is read from a request, how it is set. */
export const SESSION_COOKIE = 'tcc_console';

/** What the service issues: 32 random bytes, base64url. Anything else is not looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The session id in a Cookie header, or undefined. Only well-formed ids come back, so a forged or
 * truncated cookie never costs a database lookup.
 */
export function sessionIdOf(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (SESSION_ID.test(value)) return value;
  }
  return undefined;
}

/**
 * Whether the Cookie header presents a console session at all (a non-empty session cookie, well
 * formed or not): a credential the throttle counts when it opens nothing.
 */
export function sessionCookieGiven(cookieHeader: string | undefined): boolean {
  if (!cookieHeader) return false;
  return cookieHeader.split(';').some((part) => {
    const eq = part.indexOf('=');
    return eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE && part.slice(eq + 1).trim() !== '';
  });
}

/**
 * Set-Cookie for a new session: HttpOnly (the page's scripts never see it), SameSite=Strict (no
 * other site's page can make the browser send it), Path=/ (it opens /console and /admin), Secure
 * when the browser reached us over https.
 */
export function sessionCookie(sessionId: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${sessionId}; Max-Age=${maxAgeSeconds}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Set-Cookie that makes the browser forget the session (the session itself is ended server-side). */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The request came over https, directly or through a proxy that says so. */
export function cameOverHttps(req: { protocol?: string; headers: Record<string, string | string[] | undefined> }): boolean {
  const forwarded = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https' || req.protocol === 'https';
}
