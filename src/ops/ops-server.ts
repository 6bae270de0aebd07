import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import Fastify, { FastifyInstance } from 'fastify';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { answerWhatHttpDrops, requestIdOf, serverLimits } from '../http/http-server.js';
import { refuseMalformed } from '../http/http-setup.js';
import { answerError } from '../http/problem.js';
import { HealthAnswer, HealthService } from './health.service.js';
import { MetricsScraper } from './metrics.controller.js';

/**
 * OPS_PORT: /metrics and /health* on a port of their own, so every role can be scraped and
 * probed — a worker serves nothing else. It stays up until the very end of a shutdown. Its HTTP is
 * the main port's: the same time limits, request ids, and problem+json for anything else.
 */
@Injectable()
export class OpsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OpsServer.name);
  private server?: FastifyInstance;

  constructor(
    private readonly config: AppConfig,
    private readonly health: HealthService,
    private readonly scraper: MetricsScraper,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.env.OPS_PORT;
    if (port === undefined) return;
    const app = Fastify({ logger: false, forceCloseConnections: true, ...serverLimits(this.config.env.REQUEST_TIMEOUT_MS), genReqId: requestIdOf });
    answerWhatHttpDrops(app.server);
    app.addHook('onRequest', (req, reply, done) => {
      reply.header('x-request-id', req.id);
      if (!refuseMalformed(req, reply)) done();
    });
    app.setNotFoundHandler((_req, reply) => answerError(new AppError('NOT_FOUND', 'no such resource'), reply));
    app.setErrorHandler((err, _req, reply) => answerError(err, reply));
    const send = (a: HealthAnswer) => (_req: unknown, reply: { code: (n: number) => { type: (t: string) => { send: (b: string) => void } } }) =>
      reply.code(a.status).type(a.contentType).send(JSON.stringify(a.body));
    app.get('/health/live', async (req, reply) => send(this.health.live())(req, reply));
    app.get('/health/ready', async (req, reply) => send(await this.health.ready())(req, reply));
    app.get('/health', async (req, reply) => send(await this.health.health())(req, reply));
    app.get('/metrics', async (_req, reply) => reply.type('text/plain; version=0.0.4; charset=utf-8').send(await this.scraper.scrape()));
    const address = await app.listen({ port, host: '0.0.0.0' });
    this.server = app;
    const opsPort = app.server.address();
    this.logger.log({ opsPort: typeof opsPort === 'object' && opsPort ? opsPort.port : port }, `ops endpoints on ${address}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}
