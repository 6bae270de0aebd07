import { LoggerService } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import pino from 'pino';

/** What a log line about a request carries: its X-Request-Id. */
export interface RequestContext {
  reqId: string;
}

/** Set for the handler of every HTTP request (see http/http-setup.ts). */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * JSON lines on stdout, written asynchronously (a busy event loop does not wait on the pipe) and
 * flushed on exit. Secrets never reach it because nothing logs headers, query strings, request
 * bodies or statement parameters: code logs explicit fields, and errors through `describeError`
 * (name, message, code, stack). No redaction pass: at thousands of lines a second it costs
 * more than the rest of the logging (measured), and it would only hide a bug, not prevent it.
 */
export function createRootLogger(level: LogLevel, base: Record<string, unknown>): pino.Logger {
  // Lines are gathered up to 8 KiB and written together — one write for dozens of access-log lines
  // under load — and never wait longer than 100 ms. Gathered as Buffers, not as one growing string:
  // in string mode sonic-boom measures its pending string on every line, copying it whole each time
  // (heap profiles of the benchmark: ~5 KB less allocated per access-log line this way).
  const destination = pino.destination({ dest: 1, sync: false, minLength: 8192, contentMode: 'buffer' });
  // pino.destination registers its own synchronous flush on process exit.
  setInterval(() => destination.flush(), 100).unref();
  return pino(
    {
      level,
      base,
      messageKey: 'msg',
      serializers: { err: pino.stdSerializers.err },
    },
    // In buffer mode SonicBoom.write takes Buffers (its types only name strings).
    { write: (line: string) => destination.write(Buffer.from(line) as unknown as string) },
  );
}

/** Nest's LoggerService over pino; a line logged while serving a request carries its reqId. */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly root: pino.Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest calls (message, ...params, context); code here calls logger.warn({ fields }, 'text'). */
  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    if (!this.root.isLevelEnabled(level)) return;
    const params = [...rest];
    const context = typeof params[params.length - 1] === 'string' && params.length >= 1 ? (params.pop() as string) : undefined;
    const fields: Record<string, unknown> = {};
    let msg: string | undefined;
    if (message !== null && typeof message === 'object' && !(message instanceof Error)) Object.assign(fields, message);
    else if (message instanceof Error) fields.err = message;
    else msg = String(message);
    for (const p of params) {
      if (typeof p === 'string' && msg === undefined) msg = p;
      else if (typeof p === 'string' && level === 'error' && !fields.stack) fields.stack = p;
    }
    if (context) fields.context = context;
    const reqId = requestContext.getStore()?.reqId;
    if (reqId) fields.reqId = reqId;
    this.root[level](fields, msg ?? '');
  }
}
