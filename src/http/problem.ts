import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AppError, ErrorCode, toProblem } from '../common/errors.js';
import { isConnectionError } from '../database/db.js';

export function sendProblem(reply: FastifyReply, code: ErrorCode, detail: string, extra: Record<string, unknown> = {}, status?: number): FastifyReply {
  const body = toProblem(code, detail, extra, status);
  return reply.code(body.status).type('application/problem+json').send(JSON.stringify(body));
}

/**
 * A contract refusal a handler returns instead of throwing (a hot path: see TryAnswer), as the
 * body of a passthrough reply: the same problem+json the filter would send.
 */
export function problemAnswer(reply: FastifyReply, err: AppError): string {
  const body = toProblem(err.code, err.message, err.extra, err.status);
  reply.code(body.status).type('application/problem+json');
  return JSON.stringify(body);
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

/**
 * The one place errors become HTTP answers: problem+json with the contract's code, never a stack.
 * Used by the Nest filter (errors thrown by handlers) and Fastify's error handler (errors from
 * body parsing and hooks, before Nest sees the request).
 */
export function answerError(err: unknown, reply: FastifyReply): void {
  if (reply.sent) return;
  if (err instanceof AppError) {
    sendProblem(reply, err.code, err.message, err.extra, err.status);
    return;
  }
  if (err instanceof HttpException) {
    const code = codeForHttpStatus(err.getStatus());
    const detail = code === 'NOT_FOUND' ? 'no such resource' : code === 'PAYLOAD_TOO_LARGE' ? 'the body is over 64 KiB' : err.message;
    sendProblem(reply, code, detail);
    return;
  }
  const fastifyCode = (err as { code?: string })?.code;
  if (fastifyCode && FASTIFY_CODES[fastifyCode]) {
    const code = FASTIFY_CODES[fastifyCode];
    sendProblem(reply, code, code === 'PAYLOAD_TOO_LARGE' ? 'the body is over 64 KiB' : (err as Error).message);
    return;
  }
  if (isConnectionError(err)) {
    sendProblem(reply, 'SERVICE_UNAVAILABLE', 'a dependency cannot be reached');
    return;
  }
  const status = (err as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    sendProblem(reply, codeForHttpStatus(status), (err as Error).message ?? 'bad request');
    return;
  }
  logger.error({ err: describeError(err) }, 'unhandled error');
  sendProblem(reply, 'INTERNAL', 'internal error');
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
