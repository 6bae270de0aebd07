import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { ApiKeys } from './access/api-keys.js';
import { AuditLog } from './access/audit.js';
import { auditAdminCalls } from './access/audit-hook.js';
import { assertEveryRouteScoped, scopeResolver } from './access/scopes.js';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { ConsoleNotFound, isConsolePath, registerConsolePages } from './console/console-pages.js';
import { ConsoleSessions } from './console/console-sessions.js';
import { runPendingMigrations } from './database/migrate.js';
import { Authenticator, routeOf } from './http/auth.js';
import { CredentialThrottle } from './http/credential-throttle.js';
import { trustProxies } from './http/client-address.js';
import { FastPath } from './http/fast-path.js';
import { answerWhatHttpDrops, requestIdOf, serverLimits } from './http/http-server.js';
import { configureHttp, frameworkErrors } from './http/http-setup.js';
import { BODY_LIMIT } from './http/json-body.js';
import { ProblemFilter } from './http/problem.js';
import { RateLimiter } from './http/rate-limit.js';
import { JobScheduler } from './jobs/job-scheduler.js';
import { redisConnection, redisMisconfiguration } from './jobs/redis.js';
import { createRootLogger, PinoLoggerService } from './logging/logger.js';
import { MetricsService } from './metrics/metrics.service.js';
import { registerQueueBoard } from './ops/queue-board.js';
import { OrderAnswers } from './orders/order-answers.js';
import { setupSwagger } from './ops/swagger.js';

/** A shutdown that cannot finish (a dependency hangs) must still end the process. */
function hardDeadlineOnSignals(graceMs: number): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => setTimeout(() => process.exit(1), graceMs).unref());
  }
}

/**
 * After a signal's shutdown, end with process.exit(0) rather than re-raising the signal: only an
 * exit runs pino's 'exit' handler that writes the log lines still buffered (the last ~100 ms of
 * them, the shutdown's own included), which a death by signal would drop.
 */
const SHUTDOWN = { useProcessExit: true };

/**
 * Pages that browsers render get security headers and a CSP; JSON answers do not need them. Decided
 * on the matched route's template, like authorization: `/%63onsole` is served by /console's route.
 */
const HTML_ROUTES = /^\/(?:docs|admin\/queues|console)(?:\/|\*|$)/;
/** The operator console runs no inline script or style, so its CSP allows none (the other pages need them). */
const CONSOLE_ROUTES = /^\/console(?:\/|\*|$)/;
const PAGE_HEADERS: HelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      // /docs (Swagger UI) and /admin/queues (bull-board) ship inline bootstrap code; nothing is
      // loaded from elsewhere (bull-board's web font falls back to the system's).
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'", "'unsafe-inline'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      formAction: ["'self'"],
    },
  },
};
const CONSOLE_HEADERS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      frameAncestors: ["'none'"],
      formAction: ["'self'"],
    },
  },
};

/**
 * Security headers for the HTML pages only, from helmet's own middleware built once. Not the
 * @fastify/helmet plugin: it adds two hooks to every request, one of them async, a visible share of
 * the CPU of a refused Try — for headers a JSON answer never gets.
 */
function securityHeaders(fastify: FastifyInstance): void {
  const page = helmet(PAGE_HEADERS);
  const consolePage = helmet(CONSOLE_HEADERS);
  fastify.addHook('onRequest', (req, reply, done) => {
    const route = routeOf(req);
    if (route === undefined || !HTML_ROUTES.test(route)) return done();
    (CONSOLE_ROUTES.test(route) ? consolePage : page)(req.raw, reply.raw, (err?: unknown) => done(err as Error | undefined));
  });
}

/**
 * A console path the router cannot read (not valid percent-encoding) is a page that does not
 * exist: the console's page says so, under the console's security headers.
 */
let consoleNotFound: ConsoleNotFound | undefined;
const consoleHeaders = helmet(CONSOLE_HEADERS);
function consolePageFor(req: FastifyRequest, reply: FastifyReply, path: string): boolean {
  const notFound = consoleNotFound;
  if (!notFound || !isConsolePath(path)) return false;
  consoleHeaders(req.raw, reply.raw, () => notFound(req, reply));
  return true;
}

/** One entry for every role: ROLE=api serves HTTP, ROLE=worker runs jobs and periodic work, all does both. */
async function bootstrap(): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.fromProcessEnv();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  const env = config.env;
  // A Redis setting that cannot work (REDIS_URL naming a cluster node: every queue command would
  // fail MOVED or CROSSSLOT) stops start-up here, named, rather than failing without end later.
  const redisProblem = await redisMisconfiguration(env);
  if (redisProblem) {
    process.stderr.write(`Invalid Redis setting: ${redisProblem}\n`);
    process.exit(1);
  }
  trustProxies(env.TRUST_PROXY);
  hardDeadlineOnSignals(env.PAYMENT_TIMEOUT_MS * 2 + 15_000);
  const root = createRootLogger(env.LOG_LEVEL, { service: 'tcc-inventory', role: env.ROLE, pid: process.pid });
  const logger = new PinoLoggerService(root);
  const ran = await runPendingMigrations(env.DATABASE_DIRECT_URL);
  const module = AppModule.forRole(config);

  if (!config.runsHttp) {
    const ctx = await NestFactory.createApplicationContext(module, { logger });
    ctx.enableShutdownHooks(undefined, SHUTDOWN);
    await ctx.init();
    logger.log({ migrations: ran.migrations, sqlFunctions: ran.sqlFunctions }, 'worker started', 'Bootstrap');
    return;
  }

  const auth = new Authenticator(env.ADMIN_TOKEN);
  const fastPath = new FastPath();
  const adapter = new FastifyAdapter({
    serverFactory: fastPath.serverFactory as never,
    bodyLimit: BODY_LIMIT,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => requestIdOf(req),
    frameworkErrors: frameworkErrors(() => auth, (req, reply, path) => consolePageFor(req, reply, path)),
    ...serverLimits(env.REQUEST_TIMEOUT_MS),
    return503OnClosing: false, // the fast path's server answers them, as problem+json
    forceCloseConnections: 'idle',
    keepAliveTimeout: 75_000,
    routerOptions: { maxParamLength: 512 },
    logger: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, { logger, bodyParser: false });
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  answerWhatHttpDrops(app.getHttpServer());
  const rateLimiter =
    env.RATE_LIMIT_PER_MINUTE > 0 ? new RateLimiter({ perMinute: env.RATE_LIMIT_PER_MINUTE, windowMs: env.RATE_LIMIT_WINDOW_MS, redis: redisConnection(env, 'limiter'), prefix: env.QUEUE_PREFIX }) : undefined;
  const httpSetup = { auth, metrics: app.get(MetricsService), logger: root, logRequests: env.LOG_REQUESTS, rateLimiter };
  const record = configureHttp(fastify, httpSetup);
  // Every protected route needs a scope of its own in the table (access/scopes.ts): a route without
  // one stops start-up, once every route (the plugins' too) is registered.
  const routes: { method: string; url: string }[] = [];
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  fastify.addHook('onReady', async () => assertEveryRouteScoped(routes));
  auth.useScopes(scopeResolver(env.CHECKOUT_AUTH));
  // Try and Confirm straight from node:http (http/fast-path.ts); with the rate limit on, Fastify's
  // hook applies it to them; with CHECKOUT_AUTH=required, Fastify's authorization check.
  fastPath.refuseWhenClosing(fastify);
  if (!rateLimiter && env.CHECKOUT_AUTH === 'open') fastPath.install(app.get(OrderAnswers), record, httpSetup.metrics.fastPathRequests);
  securityHeaders(fastify);
  await registerQueueBoard(fastify, app.get(JobScheduler));
  auth.useSessions(app.get(ConsoleSessions));
  auth.useKeys(app.get(ApiKeys));
  auditAdminCalls(fastify, app.get(AuditLog));
  const credentialThrottle = app.get(CredentialThrottle);
  auth.useThrottle(credentialThrottle);
  consoleNotFound = await registerConsolePages(fastify);
  app.useGlobalFilters(new ProblemFilter());
  setupSwagger(app);
  app.enableShutdownHooks(undefined, SHUTDOWN);
  await Promise.all([rateLimiter?.ready(2000), credentialThrottle.ready(2000)]);
  await app.listen({ port: env.PORT, host: '0.0.0.0', reusePort: env.HTTP_REUSE_PORT } as { port: number; host: string });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : env.PORT;
  logger.log({ port, migrations: ran.migrations, sqlFunctions: ran.sqlFunctions }, `listening on port ${port}`, 'Bootstrap');
}

bootstrap().catch((err) => {
  process.stderr.write(`start-up failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
