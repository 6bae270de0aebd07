import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../common/errors.js';

/** Routes behind the admin token: the admin API (with the queue dashboard) and the TCC participant. */
export function isProtectedPath(path: string): boolean {
  return path === '/admin' || path.startsWith('/admin/') || path.startsWith('/tcc/');
}

/**
 * Who may call the admin and participant routes: a request bearing ADMIN_TOKEN. Checked before
 * the body is read, so UNAUTHORIZED wins over any body error and a caller without the token
 * learns nothing about its body. The answer never says whether a token is configured.
 */
export class Authenticator {
  private readonly expected: Buffer | undefined;

  constructor(token: string | undefined) {
    this.expected = token ? digest(token) : undefined;
  }

  /** Undefined when the request may go on; else the error to answer with. */
  check(req: FastifyRequest, reply: FastifyReply): AppError | undefined {
    const url = req.url;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (!isProtectedPath(path)) return undefined;
    if (path.startsWith('/admin')) reply.header('cache-control', 'no-store');
    if (this.bearerMatches(req.headers.authorization)) return undefined;
    reply.header('www-authenticate', 'Bearer');
    return new AppError('UNAUTHORIZED', 'a valid bearer token is required');
  }

  /** Compares digests, so neither the token's content nor its length leaks through timing. */
  bearerMatches(header: string | undefined): boolean {
    if (!this.expected || !header) return false;
    const match = /^Bearer (.+)$/i.exec(header);
    return !!match && timingSafeEqual(digest(match[1]), this.expected);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
