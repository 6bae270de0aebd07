import { createHash, timingSafeEqual } from 'node:crypto';
import express, { NextFunction, Request, Response } from 'express';
import { sendProblem } from './problem.filter.js';

export const BODY_LIMIT = '64kb';

/** Bearer check for /admin and /tcc, before the body is read: UNAUTHORIZED wins over body errors. */
export function bearerAuth(token: string | undefined) {
  const expected = token ? createHash('sha256').update(token).digest() : undefined;
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    // Compare digests so neither the token's content nor its length leaks through timing.
    const ok = !!expected && !!match && timingSafeEqual(createHash('sha256').update(match[1]).digest(), expected);
    if (ok) return next();
    res.setHeader('WWW-Authenticate', 'Bearer');
    sendProblem(res, 'UNAUTHORIZED', expected ? 'a valid bearer token is required' : 'admin routes are disabled: ADMIN_TOKEN is not set');
  };
}

/** JSON bodies up to 64 KiB; a too-large or unparsable body is answered here, in the contract's words. */
export function jsonBody() {
  const parse = express.json({ limit: BODY_LIMIT, strict: false, type: ['application/json', 'application/*+json'] });
  return (req: Request, res: Response, next: NextFunction): void => {
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const type = (err as { type?: string }).type;
      if (type === 'entity.too.large') return sendProblem(res, 'PAYLOAD_TOO_LARGE', `the body is over ${BODY_LIMIT}`);
      if (type === 'entity.parse.failed') return sendProblem(res, 'MALFORMED_JSON', 'the body is not valid JSON');
      sendProblem(res, 'VALIDATION_FAILED', (err as Error).message ?? 'unreadable body', { errors: [{ field: 'body', message: 'unreadable body' }] });
    });
  };
}
