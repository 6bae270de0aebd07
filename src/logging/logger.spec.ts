import pino from 'pino';
import { AccessEntry, accessLog, LogLevel, loggerOptions } from './logger.js';

/** A root logger as main.ts makes it, writing into an array instead of stdout. */
function capture(level: LogLevel): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino(loggerOptions(level, { service: 'tcc-inventory', role: 'all', pid: 4242 }), { write: (l: string) => lines.push(l) });
  return { logger, lines };
}

const entries: AccessEntry[] = [
  { requestId: '8ac718b4-7ba7-4931-a6d5-a91380c42a75', method: 'POST', path: '/orders', route: '/orders', remoteAddress: '203.0.113.7', status: 201, responseTimeMs: 3 },
  { requestId: 'caller.id:1-2_3', method: 'POST', path: '/orders/1b2c3d4e-0000-4000-8000-00000000abcd/confirm', route: '/orders/:id/confirm', remoteAddress: '2001:db8::1', status: 402, responseTimeMs: 17, orderId: '1b2c3d4e-0000-4000-8000-00000000abcd' },
  { requestId: 'r', method: 'GET', path: '/inventory/"quoted"\\back\u0001ctrl\u2028é😀', route: 'unmatched', remoteAddress: 'unknown', status: 404, responseTimeMs: 0 },
  { requestId: 'r5', method: 'DELETE', path: '/admin/webhooks/x', route: '/admin/webhooks/:name', remoteAddress: '10.0.0.2', status: 503, responseTimeMs: 1200 },
];

/** What pino writes for the same line (the recorder wrote it this way before accessLog). */
function viaPino(logger: pino.Logger, e: AccessEntry): void {
  logger[e.status >= 500 ? 'error' : 'info'](
    { req: { id: e.requestId, method: e.method, url: e.path, route: e.route, remoteAddress: e.remoteAddress }, res: { statusCode: e.status }, responseTime: e.responseTimeMs, ...(e.orderId ? { orderId: e.orderId } : {}) },
    'request completed',
  );
}

describe('accessLog', () => {
  it('writes, byte for byte, the line the root logger writes (time aside)', () => {
    const ours = capture('info');
    const theirs = capture('info');
    const log = accessLog(ours.logger);
    for (const e of entries) {
      log(e);
      viaPino(theirs.logger, e);
    }
    const untimed = (l: string) => l.replace(/"time":\d+/, '"time":0');
    expect(ours.lines.map(untimed)).toEqual(theirs.lines.map(untimed));
    expect(ours.lines.map((l) => JSON.parse(l).req.url)).toEqual(entries.map((e) => e.path));
  });

  it('keeps the level: info lines go when the level is warn, error lines stay', () => {
    const { logger, lines } = capture('warn');
    const log = accessLog(logger);
    for (const e of entries) log(e);
    expect(lines.map((l) => JSON.parse(l).res.statusCode)).toEqual([503]);
  });
});
