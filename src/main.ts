import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { bearerAuth, jsonBody } from './common/http-middleware.js';
import { ProblemFilter } from './common/problem.filter.js';
import { StrictValidationPipe } from './common/validation.js';
import { runPendingMigrations } from './database/migrate.js';
import { httpMetrics } from './ops/http-metrics.js';
import { MetricsService } from './ops/metrics.service.js';
import { setupSwagger } from './ops/swagger.js';
import { queueBoard } from './ops/queue-board.js';
import { JobScheduler } from './jobs/job-scheduler.js';

/** A shutdown that cannot finish (a dependency hangs) must still end the process. */
function hardDeadlineOnSignals(graceMs: number): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => setTimeout(() => process.exit(1), graceMs).unref());
  }
}

/** One entry for every role: ROLE=api serves HTTP, ROLE=worker runs jobs and the sweeper, all does both. */
async function bootstrap(): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.fromProcessEnv();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  hardDeadlineOnSignals(config.env.PAYMENT_TIMEOUT_MS * 2 + 15_000);
  const ran = await runPendingMigrations(config.env.DATABASE_URL);
  const module = AppModule.register(config);

  if (!config.runsHttp) {
    const ctx = await NestFactory.createApplicationContext(module, { bufferLogs: true });
    ctx.useLogger(ctx.get(Logger));
    ctx.enableShutdownHooks();
    await ctx.init();
    ctx.get(Logger).log({ role: config.env.ROLE, migrations: ran }, 'worker started', 'Bootstrap');
    return;
  }

  const app = await NestFactory.create<NestExpressApplication>(module, { bodyParser: false, bufferLogs: true });
  const logger = app.get(Logger);
  app.useLogger(logger);
  app.disable('x-powered-by');
  app.use(httpMetrics(app.get(MetricsService)));
  // Auth before the body is read: a caller without the token learns nothing about its body.
  app.use(['/admin', '/tcc'], bearerAuth(config.env.ADMIN_TOKEN));
  app.use('/admin/queues', queueBoard(app.get(JobScheduler)));
  app.use(jsonBody());
  app.useGlobalFilters(new ProblemFilter());
  app.useGlobalPipes(new StrictValidationPipe());
  setupSwagger(app);
  app.enableShutdownHooks();
  await app.listen(config.env.PORT);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.env.PORT;
  logger.log({ port, role: config.env.ROLE, migrations: ran }, `listening on port ${port}`, 'Bootstrap');
}

bootstrap().catch((err) => {
  process.stderr.write(`start-up failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
