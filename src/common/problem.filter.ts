import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AppError, ErrorCode, toProblem } from './errors.js';
import { isConnectionError } from '../database/db.js';

export function sendProblem(res: Response, code: ErrorCode, detail: string, extra: Record<string, unknown> = {}): void {
  const body = toProblem(code, detail, extra);
  res.status(body.status).type('application/problem+json').send(JSON.stringify(body));
}

function codeForHttpStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
    case 403:
      return 'UNAUTHORIZED';
    case 404:
    case 405:
      return 'NOT_FOUND';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 503:
      return 'SERVICE_UNAVAILABLE';
    default:
      return status < 500 ? 'VALIDATION_FAILED' : 'INTERNAL';
  }
}

/** The one place errors become HTTP answers: problem+json with the contract's code, never a stack. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemFilter');

  catch(err: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    if (err instanceof AppError) return sendProblem(res, err.code, err.message, err.extra);
    if (err instanceof HttpException) {
      const code = codeForHttpStatus(err.getStatus());
      const body = err.getResponse() as { details?: unknown };
      if (code === 'SERVICE_UNAVAILABLE' && body && typeof body === 'object' && body.details) {
        // The health check's verdict per dependency, kept so an operator sees which one is down.
        return sendProblem(res, code, 'a dependency is down', { checks: body.details });
      }
      return sendProblem(res, code, code === 'NOT_FOUND' ? 'no such resource' : err.message);
    }
    if (isConnectionError(err)) return sendProblem(res, 'SERVICE_UNAVAILABLE', 'a dependency cannot be reached');
    this.logger.error({ err }, 'unhandled error');
    sendProblem(res, 'INTERNAL', 'internal error');
  }
}
