import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import { AppConfig } from '../config/app-config.js';

/** JSON logs (pino): request ids, no secrets (authorization, cookies and payment tokens redacted). */
export function loggerOptions(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.env.LOG_LEVEL,
      base: { service: 'tcc-inventory', role: config.env.ROLE, pid: process.pid },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]', '*.paymentToken', 'paymentToken'],
        censor: '[redacted]',
      },
      genReqId: (req: IncomingMessage) => {
        const given = req.headers['x-request-id'];
        return typeof given === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(given) ? given : randomUUID();
      },
      customProps: (req: IncomingMessage) => {
        const match = /^\/(?:admin\/)?orders\/([0-9a-fA-F-]{36})/.exec(req.url ?? '');
        return match ? { orderId: match[1] } : {};
      },
      autoLogging: { ignore: (req: IncomingMessage) => req.url === '/health' || req.url === '/metrics' },
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
      },
    },
  };
}
