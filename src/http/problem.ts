import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AppError, ErrorCode, Problem, toProblem } from '../common/errors.js';
import { DatabaseBusyError, isConnectionError } from '../database/db.js';

/** The media type of every error answer (Fastify adds `; charset=utf-8`, as the fast path writes it). */
export const PROBLEM_TYPE = 'application/problem+json';

export function sendProblem(reply: FastifyReply, code: ErrorCode, detail: string, extra: Record<string, unknown> = {}, status?: number): FastifyReply {
  return writeProblem(reply, toProblem(code, detail, extra, status));
}

function writeProblem(reply: FastifyReply, body: Problem): FastifyReply {
  return reply.code(body.status).type(PROBLEM_TYPE).send(JSON.stringify(body));
}

function codeForHttpStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'UNAUTHORIZED';
    case 403:
      return 'FORBIDDEN';
    case 404:
    case 405:
      return 'NOT_FOUND';
    case 408:
      return 'REQUEST_TIMEOUT';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 429:
      return 'RATE_LIMITED';
    case 503:
      return 'SERVICE_UNAVAILABLE';
    default:
      return status < 500 ? 'VALIDATION_FAILED' : 'INTERNAL';
  }
}

/** Fastify's own errors (body parsing, limits) in the contract's words. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'MALFORMED_JSON',
  FST_ERR_BAD_URL: 'NOT_FOUND',
};

const logger = new Logger('Problem');

const TOO_LARGE = 'the body is over its limit (64 KiB; 1 MiB on POST /admin/inventory/import)';

/**
 * The one place errors become HTTP answers: problem+json with the contract's code, never a stack.
 * Used by the Nest filter (errors thrown by handlers), Fastify's error handler (errors from body
 * parsing and hooks, before Nest sees the request) and the checkout fast path (http/fast-path.ts).
 * Only an error nothing here recognises is logged, as the defect it is.
 */
export function problemOf(err: unknown): Problem {
  if (err instanceof AppError) return toProblem(err.code, err.message, err.extra, err.status);
  if (err instanceof HttpException) {
    const code = codeForHttpStatus(err.getStatus());
    return toProblem(code, code === 'NOT_FOUND' ? 'no such resource' : code === 'PAYLOAD_TOO_LARGE' ? TOO_LARGE : err.message);
  }
  const fastifyCode = (err as { code?: string })?.code;
  if (fastifyCode && FASTIFY_CODES[fastifyCode]) {
    const code = FASTIFY_CODES[fastifyCode];
    return toProblem(code, code === 'PAYLOAD_TOO_LARGE' ? TOO_LARGE : (err as Error).message);
  }
  if (isConnectionError(err)) return toProblem('SERVICE_UNAVAILABLE', 'a dependency cannot be reached');
  const status = (err as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return toProblem(codeForHttpStatus(status), (err as Error).message ?? 'bad request');
  logger.error({ err: describeError(err) }, 'unhandled error');
  return toProblem('INTERNAL', 'internal error');
}

/**
 * Retry-After (seconds) of a 503: 1 when the database is busy (a row another transaction holds
 * longer than this request waits for it: the same request a moment later usually succeeds), 5 when
 * a dependency cannot be reached or refuses connections; none for any other answer.
 */
export const BUSY_RETRY_AFTER_S = 1;
export const UNREACHABLE_RETRY_AFTER_S = 5;

export function retryAfterOf(err: unknown, problem: Problem): number | undefined {
  if (problem.status !== 503) return undefined;
  return err instanceof DatabaseBusyError ? BUSY_RETRY_AFTER_S : UNREACHABLE_RETRY_AFTER_S;
}

export function answerError(err: unknown, reply: FastifyReply): void {
  if (reply.sent) return;
  const problem = problemOf(err);
  const retryAfter = retryAfterOf(err, problem);
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  writeProblem(reply, problem);
}

/** An error as a log may show it: name, message, code and stack, never attached parameters. */
export function describeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  return { type: err.name, message: err.message, code: (err as { code?: unknown }).code, stack: err.stack };
}

@Catch()
export class ProblemFilter implements ExceptionFilter {
  catch(err: unknown, host: ArgumentsHost): void {
    answerError(err, host.switchToHttp().getResponse<FastifyReply>());
  }
}
