import { Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { ConfirmService } from '../orders/confirm.service.js';
import { RefundService } from '../orders/refund.service.js';
import { OrderJob, QUEUES, QueueName } from './queues.js';
import { redisConnection } from './redis.js';
import { settleWithin } from '../common/with-timeout.js';
import type { Redis } from 'ioredis';

type Handler = (orderId: string) => Promise<unknown>;

/**
 * One BullMQ worker per queue, each with exactly one handler. Handlers only re-read Postgres and
 * act if something is due, so a duplicate or stale job does nothing. Runs in ROLE worker / all.
 */
@Injectable()
export class JobWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobWorkers.name);
  private readonly workers: Worker<OrderJob>[] = [];
  private readonly connections: Redis[] = [];

  constructor(
    private readonly config: AppConfig,
    private readonly confirm: ConfirmService,
    private readonly refunds: RefundService,
  ) {}

  handlers(): Record<QueueName, Handler> {
    return {
      [QUEUES.confirmRetry]: (id) => this.confirm.advance(id),
      [QUEUES.reservationExpiry]: (id) => this.confirm.advance(id),
      [QUEUES.refunds]: (id) => this.refunds.process(id),
    };
  }

  onApplicationBootstrap(): void {
    const env = this.config.env;
    for (const [queue, handle] of Object.entries(this.handlers()) as [QueueName, Handler][]) {
      const connection = redisConnection(env.REDIS_URL, 'worker');
      this.connections.push(connection);
      const worker = new Worker<OrderJob>(
        queue,
        async (job: Job<OrderJob>) => {
          if (job.name !== queue) throw new UnrecoverableError(`no handler for job ${job.name} on ${queue}`);
          try {
            await handle(job.data.orderId);
          } catch (err) {
            // A contract error (an order that cannot exist, a state that refuses) will not heal
            // by retrying; anything else (a lost connection) is retried with backoff.
            if (err instanceof AppError && err.code !== 'SERVICE_UNAVAILABLE') throw new UnrecoverableError(`${err.code}: ${err.message}`);
            throw err;
          }
        },
        {
          connection,
          prefix: env.QUEUE_PREFIX,
          concurrency: 8,
          // A payment call may take PAYMENT_TIMEOUT_MS; the lock must outlive it with room to spare,
          // and a stalled job (its worker died) is handed to another worker rather than failed.
          lockDuration: Math.max(30_000, env.PAYMENT_TIMEOUT_MS * 4),
          stalledInterval: 15_000,
          maxStalledCount: 3,
        },
      );
      worker.on('failed', (job, err) => this.logger.warn({ queue, orderId: job?.data.orderId, err: err.message }, 'job failed'));
      worker.on('error', (err) => this.logger.warn({ queue, err: err.message }, 'worker error'));
      this.workers.push(worker);
    }
    this.logger.log(`job workers started: ${this.workers.map((w) => w.name).join(', ')}`);
  }

  /**
   * SIGTERM: stop taking jobs and let in-flight ones finish (a payment call is bounded by
   * PAYMENT_TIMEOUT_MS). If Redis is away, closing cannot complete: give up after the grace
   * period — an unfinished job is safe to run again, its order is re-read from Postgres.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const grace = this.config.env.PAYMENT_TIMEOUT_MS * 2 + 2000;
    if ((await settleWithin(Promise.allSettled(this.workers.map((w) => w.close())), grace)) === 'timeout') {
      this.logger.warn('job workers did not close in time; forcing');
      await settleWithin(Promise.allSettled(this.workers.map((w) => w.close(true))), 1000);
    }
    for (const c of this.connections) c.disconnect();
  }
}
