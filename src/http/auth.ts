import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../common/errors.js';
import { ROOT, setActor, type Principal } from './actor.js';
import { clientAddress } from './client-address.js';
import type { CredentialThrottle } from './credential-throttle.js';
import { cameOverHttps, clearedSessionCookie, sessionCookieGiven, sessionIdOf } from './session-cookie.js';

/** A request's path, without its query string (which may carry what must not be logged). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Routes behind a credential whatever CHECKOUT_AUTH says: the admin API (with the queue dashboard)
 * and the TCC participant. Given a route template (the route that will serve a request), never a
 * request's raw URL: the router decodes and normalises a path before it matches (`/%61dmin/…`, an
 * absolute-form target), so only what it matched says what will run.
 */
export function isProtectedRoute(route: string): boolean {
  return route === '/admin' || route.startsWith('/admin/') || route.startsWith('/tcc/');
}

/** Where a console session cookie stands in for the token: the admin API and the queue dashboard, never /tcc/*. */
function acceptsSession(route: string): boolean {
  return route === '/admin' || route.startsWith('/admin/');
}

/**
 * The template of the route that will serve the request, once the router has matched it; undefined
 * when nothing matched (the not-found handler answers, and runs nothing).
 */
export function routeOf(req: FastifyRequest): string | undefined {
  return req.routeOptions?.url;
}

/** Methods that change state: with a session cookie they need its anti-CSRF token too. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What a credential opens: who it is, its scopes, and the name the ledger records as `operator`. */
export interface Credentials {
  principal: Principal;
  scopes: readonly string[];
  operator: string | null;
}

/** The operator console's sessions, as the check needs them (src/console/console-sessions.ts). */
export interface SessionLookup {
  /** A live session's anti-CSRF token and credentials; undefined when the session is unknown, ended or expired. */
  credentialsOf(sessionId: string): Promise<(Credentials & { csrfToken: string }) | undefined>;
}

/** API keys, as the check needs them (src/access/api-keys.ts). */
export interface KeyLookup {
  /** A live key's credentials; undefined when the key is unknown, revoked or expired. */
  credentialsOf(key: string): Promise<Credentials | undefined>;
}

/** The scope a request to a route needs; undefined when the route needs no credential (src/access/scopes.ts). */
export type ScopeOf = (method: string, route: string) => string | undefined;

/** What the service issues as an API key: `tcc_` and 43 base64url characters. Anything else is not looked up. */
const API_KEY = /^tcc_[A-Za-z0-9_-]{43}$/;

const ROOT_CREDENTIALS: Credentials = { principal: ROOT, scopes: ['admin'], operator: null };

export type Verdict = AppError | undefined;

/**
 * Who may call a protected route (the admin and participant routes; the checkout routes when
 * CHECKOUT_AUTH=required), and with which right: a bearer credential — the root token (every right)
 * or an API key (its scopes) — or, on /admin/* only, a browser holding a live console session (the
 * root token's, or an operator's with their role's scopes; state changes then also need the
 * session's X-CSRF-Token). No credential, or a wrong, revoked or expired one: 401; a valid one
 * without the route's scope: 403 FORBIDDEN with `requiredScope`. Checked before the body is read,
 * so 401/403 win over any body error and a caller without the right learns nothing about its body.
 * The answer never says whether a token is configured. A request that presents a credential (an
 * Authorization header, a session cookie) goes through the credential throttle
 * (credential-throttle.ts): 429 once its address has presented too many wrong ones, whatever it
 * presents now. Synchronous for every other route and for a request without a credential (401 at
 * once, never counted).
 */
export class Authenticator {
  private readonly expected: Buffer | undefined;
  private sessions: SessionLookup | undefined;
  private keys: KeyLookup | undefined;
  private throttle: CredentialThrottle | undefined;
  private scopeOf: ScopeOf = (_method, route) => (isProtectedRoute(route) ? 'admin' : undefined);

  constructor(token: string | undefined) {
    this.expected = token ? digest(token) : undefined;
  }

  /** Console sessions become valid credentials on /admin/* once this is set (main.ts). */
  useSessions(sessions: SessionLookup): void {
    this.sessions = sessions;
  }

  /** API keys become valid bearer credentials once this is set (main.ts). */
  useKeys(keys: KeyLookup): void {
    this.keys = keys;
  }

  /** Which routes are protected, and by which scope (main.ts: access/scopes.ts's table). */
  useScopes(scopeOf: ScopeOf): void {
    this.scopeOf = scopeOf;
  }

  /** Wrong credentials are throttled once this is set (main.ts). */
  useThrottle(throttle: CredentialThrottle): void {
    this.throttle = throttle;
  }

  /**
   * Undefined when the request may go on; else the error to answer with. Decided on the matched
   * route (`route`, routeOf), or — where the router could not match at all (a path that is not
   * valid percent-encoding) — on the raw path, which then only makes the answer stricter.
   */
  check(req: FastifyRequest, reply: FastifyReply, route: string | undefined = routeOf(req)): Verdict | Promise<Verdict> {
    if (route === undefined) return undefined;
    const scope = this.scopeOf(req.method, route);
    if (scope === undefined) return undefined;
    const sessionsHere = this.sessions !== undefined && acceptsSession(route);
    if (acceptsSession(route)) reply.header('cache-control', 'no-store');
    const cookie = sessionsHere && sessionCookieGiven(req.headers.cookie);
    if (req.headers.authorization === undefined && !cookie) return unauthorized(reply);
    return this.judge(req, reply, cookie, scope);
  }

  /** Compares digests, so neither the token's content nor its length leaks through timing. */
  bearerMatches(header: string | undefined): boolean {
    const given = bearerOf(header);
    return !!this.expected && given !== undefined && timingSafeEqual(digest(given), this.expected);
  }

  /**
   * A request that presents a credential: the Authorization header when there is one (a wrong one
   * is a wrong credential, counted, whatever cookie comes with it: a session never answers for a
   * guess), else the session cookie.
   */
  private async judge(req: FastifyRequest, reply: FastifyReply, cookie: boolean, scope: string): Promise<Verdict> {
    const address = clientAddress(req.raw);
    const bearer = bearerOf(req.headers.authorization);
    let credentials: Credentials | undefined;
    let kind: 'admin' | 'console' = 'admin';
    let asked = false;
    if (this.bearerMatches(req.headers.authorization)) credentials = ROOT_CREDENTIALS;
    else if (bearer !== undefined && this.keys && API_KEY.test(bearer)) {
      // Throttled: refused before the key is looked up.
      const wait = await this.throttle?.blocked(address);
      if (wait !== undefined) return rateLimited(reply, wait);
      asked = true;
      credentials = await this.keys.credentialsOf(bearer);
    }
    const cookieJudged = !credentials && cookie && req.headers.authorization === undefined;
    if (cookieJudged) {
      const wait = asked ? undefined : await this.throttle?.blocked(address);
      if (wait !== undefined) return rateLimited(reply, wait);
      asked = true;
      const sessionId = sessionIdOf(req.headers.cookie);
      const session = sessionId ? await this.sessions!.credentialsOf(sessionId) : undefined;
      if (session) {
        if (STATE_CHANGING.has(req.method) && !csrfMatches(req.headers['x-csrf-token'], session.csrfToken)) return forbidden();
        credentials = session;
        kind = 'console';
      }
    }
    if (!credentials) {
      const wait = await this.throttle?.failed(address);
      if (wait !== undefined) return rateLimited(reply, wait);
      // A dead session cookie is dropped, so the browser stops presenting it.
      if (cookieJudged) reply.header('set-cookie', clearedSessionCookie(cameOverHttps(req)));
      return unauthorized(reply);
    }
    // A right credential from a throttled address waits too: the answer never tells a guesser a guess was right.
    const wait = asked ? undefined : await this.throttle?.blocked(address);
    if (wait !== undefined) return rateLimited(reply, wait);
    setActor(req, { kind, operator: credentials.operator, principal: credentials.principal });
    if (!allows(credentials.scopes, scope)) return lacksScope(scope);
    return undefined;
  }
}

/** Whether a credential holding `held` may call a route that needs `needed` (`admin` holds every right). */
export function allows(held: readonly string[], needed: string): boolean {
  return held.includes(needed) || held.includes('admin');
}

/** The credential of an `Authorization: Bearer …` header. */
function bearerOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return /^Bearer (.+)$/i.exec(header)?.[1];
}

/** 403: a valid credential without the route's scope. */
export function lacksScope(scope: string): AppError {
  return new AppError('FORBIDDEN', `this credential does not hold the scope ${scope}`, { requiredScope: scope });
}

/** The X-CSRF-Token header equals the session's token (compared in constant time). */
export function csrfMatches(header: string | string[] | undefined, expected: string): boolean {
  return typeof header === 'string' && header.length > 0 && timingSafeEqual(digest(header), digest(expected));
}

export function forbidden(): AppError {
  return new AppError('FORBIDDEN', 'a state change made with a console session needs its X-CSRF-Token header');
}

/** 429 with Retry-After: too many wrong credentials from this address. */
export function rateLimited(reply: FastifyReply, waitS: number): AppError {
  reply.header('retry-after', String(waitS));
  return new AppError('RATE_LIMITED', `too many wrong credentials from this address; retry in ${waitS} s`);
}

function unauthorized(reply: FastifyReply): AppError {
  reply.header('www-authenticate', 'Bearer');
  return new AppError('UNAUTHORIZED', 'a valid bearer token is required');
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
