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
 * (name, message, code, stack). No redaction pass: at thousands of lines a second it would cost
 * more than the rest of the logging, and it would only hide a bug, not prevent it.
 */
export function createRootLogger(level: LogLevel, base: Record<string, unknown>): pino.Logger {
  // Lines are gathered up to 8 KiB and written together — one write for dozens of access-log lines
  // under load — and never wait longer than 100 ms. Gathered as Buffers, not as one growing string:
  // in string mode sonic-boom measures its pending string on every line, copying it whole each time.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 8192, contentMode: 'buffer' });
  // pino.destination registers its own synchronous flush on process exit.
  const write = timelyWriter(destination as unknown as Destination, 100);
  return pino(loggerOptions(level, base), { write });
}

/** What timelyWriter needs of pino's destination (a SonicBoom in buffer mode). */
export interface Destination {
  write(bytes: Buffer): unknown;
  /** Writes what is gathered — or nothing, while a write is in flight. */
  flush(): void;
  on(event: 'write', listener: (bytes: number) => void): unknown;
}

/**
 * The line writer over the destination: every line reaches it within `flushMs`, and the flush
 * timer runs only while something is still to be written, not on a fixed tick — an idle process is
 * not woken ten times a second for nothing. It comes back until all is out, as flush() does nothing
 * while a write is in flight (the lines gathered meanwhile would wait for the next line's timer).
 */
export function timelyWriter(destination: Destination, flushMs: number): (line: string) => void {
  let unwritten = 0;
  let flushing: NodeJS.Timeout | undefined;
  destination.on('write', (n) => (unwritten -= n));
  const flush = () => {
    destination.flush();
    flushing = unwritten > 0 ? setTimeout(flush, flushMs).unref() : undefined;
  };
  return (line: string) => {
    const bytes = Buffer.from(line);
    unwritten += bytes.length;
    destination.write(bytes);
    flushing ??= setTimeout(flush, flushMs).unref();
  };
}

/** The root logger's options (exported for the spec that holds accessLog to pino's own lines). */
export function loggerOptions(level: LogLevel, base: Record<string, unknown>): pino.LoggerOptions {
  return { level, base, messageKey: 'msg', serializers: { err: pino.stdSerializers.err } };
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

/** One request's access-log line (http/http-setup.ts). */
export interface AccessEntry {
  requestId: string;
  method: string;
  path: string;
  /** The template of the route that served it ('unmatched' when none did). */
  route: string;
  /** The client's address as http/client-address.ts judges it (behind a trusted proxy, the one it forwards). */
  remoteAddress: string;
  status: number;
  responseTimeMs: number;
  orderId?: string;
}

/**
 * Writes access-log lines — one per answered request, the most frequent line by far — as the
 * root logger would (`root.info({ req, res, responseTime, orderId }, 'request completed')`, byte
 * for byte, error level at 500 and above), through its own stream and bindings, but without pino's
 * generic serialisation of a fresh object per line, which costs several times as much. Every
 * field is already JSON-safe but the path and route, which are escaped: request ids are validated
 * or made here (A-Za-z0-9._:-), methods come from Node's parser, order ids from a hex pattern.
 */
export function accessLog(root: pino.Logger): (entry: AccessEntry) => void {
  const stream = (root as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym];
  const bindings = (root as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
  return (e) => {
    const level = e.status >= 500 ? 'error' : 'info';
    if (!root.isLevelEnabled(level)) return;
    stream.write(
      `{"level":${root.levels.values[level]},"time":${Date.now()}${bindings},"req":{"id":"${e.requestId}","method":"${e.method}","url":${JSON.stringify(e.path)},"route":${JSON.stringify(e.route)},"remoteAddress":${JSON.stringify(e.remoteAddress)}},` +
        `"res":{"statusCode":${e.status}},"responseTime":${e.responseTimeMs}${e.orderId ? `,"orderId":"${e.orderId}"` : ''},"msg":"request completed"}\n`,
    );
  };
}
