import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Job, Worker } from 'bullmq';
import { AppConfig } from '../config/app-config.js';
import { ConfirmService } from '../orders/confirm.service.js';
import { RefundService } from '../orders/refund.service.js';
import { OrderJob, QUEUES, QueueName } from './queues.js';
import { redisConnection } from './redis.js';

type Handler = (orderId: string) => Promise<unknown>;

/**
 * One BullMQ worker per queue, each with exactly one handler. Handlers only re-read Postgres and
 * act if something is due, so a duplicate or stale job does nothing. Runs in ROLE worker / all.
 */
@Injectable()
export class JobWorkers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobWorkers.name);
  private readonly workers: Worker<OrderJob>[] = [];

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
      const worker = new Worker<OrderJob>(
        queue,
        async (job: Job<OrderJob>) => {
          if (job.name !== queue) throw new Error(`no handler for job ${job.name} on ${queue}`);
          await handle(job.data.orderId);
        },
        {
          connection: redisConnection(env.REDIS_URL, 'worker'),
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

  /** SIGTERM: stop taking jobs, let in-flight ones finish, close connections. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.workers.map((w) => w.close()));
  }
}
