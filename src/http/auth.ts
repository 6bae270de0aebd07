import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../common/errors.js';
import { setActor } from './actor.js';
import { sessionIdOf } from './session-cookie.js';

/** A request's path, without its query string (which may carry what must not be logged). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Routes behind the admin token: the admin API (with the queue dashboard) and the TCC participant.
 * Given a route template (the route that will serve a request), never a request's raw URL: the
 * router decodes and normalises a path before it matches (`/%61dmin/…`, an absolute-form target),
 * so only what it matched says what will run.
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

/** The operator console's sessions, as the check needs them (src/console/console-sessions.ts). */
export interface SessionLookup {
  /** A live session's anti-CSRF token and operator; undefined when the session is unknown, ended or expired. */
  credentialsOf(sessionId: string): Promise<{ csrfToken: string; operator: string | null } | undefined>;
}

export type Verdict = AppError | undefined;

/**
 * Who may call the admin and participant routes: a request bearing ADMIN_TOKEN, or — on /admin/*
 * only — a browser holding a live console session (state changes then also need the session's
 * X-CSRF-Token). Checked before the body is read, so UNAUTHORIZED wins over any body error and a
 * caller without the token learns nothing about its body. The answer never says whether a token is
 * configured. Synchronous for every other route and for bearer requests: only a session cookie on
 * an admin route costs a (primary-key) database read.
 */
export class Authenticator {
  private readonly expected: Buffer | undefined;
  private sessions: SessionLookup | undefined;

  constructor(token: string | undefined) {
    this.expected = token ? digest(token) : undefined;
  }

  /** Console sessions become valid credentials on /admin/* once this is set (main.ts). */
  useSessions(sessions: SessionLookup): void {
    this.sessions = sessions;
  }

  /**
   * Undefined when the request may go on; else the error to answer with. Decided on the matched
   * route (`route`, routeOf), or — where the router could not match at all (a path that is not
   * valid percent-encoding) — on the raw path, which then only makes the answer stricter.
   */
  check(req: FastifyRequest, reply: FastifyReply, route: string | undefined = routeOf(req)): Verdict | Promise<Verdict> {
    if (route === undefined || !isProtectedRoute(route)) return undefined;
    if (acceptsSession(route)) reply.header('cache-control', 'no-store');
    if (this.bearerMatches(req.headers.authorization)) {
      setActor(req, { kind: 'admin', operator: null });
      return undefined;
    }
    const sessionId = this.sessions && acceptsSession(route) ? sessionIdOf(req.headers.cookie) : undefined;
    if (sessionId) return this.checkSession(this.sessions!, sessionId, req, reply);
    return unauthorized(reply);
  }

  /** Compares digests, so neither the token's content nor its length leaks through timing. */
  bearerMatches(header: string | undefined): boolean {
    if (!this.expected || !header) return false;
    const match = /^Bearer (.+)$/i.exec(header);
    return !!match && timingSafeEqual(digest(match[1]), this.expected);
  }

  private async checkSession(sessions: SessionLookup, sessionId: string, req: FastifyRequest, reply: FastifyReply): Promise<Verdict> {
    const session = await sessions.credentialsOf(sessionId);
    if (session === undefined) return unauthorized(reply);
    if (STATE_CHANGING.has(req.method) && !csrfMatches(req.headers['x-csrf-token'], session.csrfToken)) return forbidden();
    setActor(req, { kind: 'console', operator: session.operator });
    return undefined;
  }
}

/** The X-CSRF-Token header equals the session's token (compared in constant time). */
export function csrfMatches(header: string | string[] | undefined, expected: string): boolean {
  return typeof header === 'string' && header.length > 0 && timingSafeEqual(digest(header), digest(expected));
}

export function forbidden(): AppError {
  return new AppError('FORBIDDEN', 'a state change made with a console session needs its X-CSRF-Token header');
}

function unauthorized(reply: FastifyReply): AppError {
  reply.header('www-authenticate', 'Bearer');
  return new AppError('UNAUTHORIZED', 'a valid bearer token is required');
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
