import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import { AppError } from '../common/errors.js';
import { settleWithin } from '../common/with-timeout.js';
import { AppConfig } from '../config/app-config.js';
import { ParticipantService } from '../inventory/participant/participant.service.js';
import { DueOrders } from '../orders/due-orders.js';
import { RefundService } from '../orders/cancel/refund.service.js';
import { WebhookDelivery } from '../webhooks/webhook-delivery.js';
import { deliveryLeaseMs } from '../webhooks/webhook-sender.js';
import { JobScheduler } from './job-scheduler.js';
import { JobData, QUEUES, QueueName } from './queues.js';
import { queuePrefix, RedisClient, redisConnection } from './redis.js';
import { RedisFailures } from './redis-failures.js';

type Handler = (data: JobData) => Promise<unknown>;

/**
 * A queue's processor: its one handler, for the one job name the queue carries. A contract error
 * (an order that cannot exist, a state that refuses) will not heal by retrying: it fails the job
 * for good (UnrecoverableError); anything else (a lost connection, SERVICE_UNAVAILABLE) is thrown
 * as it is, and BullMQ retries it with backoff.
 */
export function processorFor(queue: QueueName, handle: Handler): (job: Pick<Job<JobData>, 'name' | 'data'>) => Promise<void> {
  return async (job) => {
    if (job.name !== queue) throw new UnrecoverableError(`no handler for job ${job.name} on ${queue}`);
    try {
      await handle(job.data);
    } catch (err) {
      if (err instanceof AppError && err.code !== 'SERVICE_UNAVAILABLE') throw new UnrecoverableError(`${err.code}: ${err.message}`);
      throw err;
    }
  };
}

/** Jobs at once per worker process; the rest take 2. Webhook attempts mostly wait on receivers. */
const CONCURRENCY: Partial<Record<QueueName, number>> = { [QUEUES.refunds]: 8, [QUEUES.webhooks]: 16 };

/**
 * A job's lock (BullMQ renews it at half its length while the job runs) and how often a worker looks
 * for jobs whose lock ran out because their worker died: BullMQ runs those again after two such
 * looks. A payment call may take PAYMENT_TIMEOUT_MS: the order queues' lock outlives it with room to
 * spare. A webhook attempt is bounded by its request timeout: its lock is the poller's lease (three
 * attempts' worth), looked at once per attempt timeout (5 s), so an attempt on the wire when its
 * worker was SIGKILLed is sent again within about 25 s — the poller claiming it again after the lease adds nothing while the
 * dead worker's job still counts as active (same job id).
 */
export function lockOf(queue: QueueName, paymentTimeoutMs: number, deliveryTimeoutMs: number): { lockDuration: number; stalledInterval: number } {
  if (queue === QUEUES.webhooks) return { lockDuration: deliveryLeaseMs(deliveryTimeoutMs), stalledInterval: deliveryTimeoutMs };
  return { lockDuration: Math.max(30_000, paymentTimeoutMs * 4), stalledInterval: 15_000 };
}

/**
 * One BullMQ worker per queue, each with exactly one handler (start-up fails otherwise). Handlers
 * re-read Postgres and act only on what is due, so a duplicate or stale job does nothing. Runs in
 * ROLE worker / all.
 */
@Injectable()
export class JobWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobWorkers.name);
  private readonly workers: Worker<JobData>[] = [];
  private readonly connections: RedisClient[] = [];

  constructor(
    private readonly config: AppConfig,
    private readonly due: DueOrders,
    private readonly refunds: RefundService,
    private readonly scheduler: JobScheduler,
    private readonly participant: ParticipantService,
    private readonly webhooks: WebhookDelivery,
    private readonly failures: RedisFailures,
  ) {}

  handlers(): Record<QueueName, Handler> {
    const bucket = (queue: QueueName) => async (data: JobData) => {
      await this.due.drive(0);
      if (queue === QUEUES.reservationExpiry) await this.participant.expireDue();
      // The database's clock may run behind this process's: look again for what is not due yet.
      const inMs = data.bucket === undefined ? undefined : await this.due.notYetDueIn(data.bucket);
      if (inMs !== undefined && data.bucket !== undefined) await this.scheduler.followUp(queue, data.bucket, inMs);
    };
    return {
      [QUEUES.confirmRetry]: bucket(QUEUES.confirmRetry),
      [QUEUES.reservationExpiry]: bucket(QUEUES.reservationExpiry),
      [QUEUES.refunds]: async (data) => {
        if (!data.orderId) throw new UnrecoverableError('refund job without an order id');
        await this.refunds.process(data.orderId);
      },
      [QUEUES.webhooks]: async ({ webhook, deliveryId, attempt }) => {
        if (!webhook || !deliveryId || attempt === undefined) throw new UnrecoverableError('webhook job without its delivery');
        await this.webhooks.attempt({ webhook, deliveryId, attempt });
      },
    };
  }

  onApplicationBootstrap(): void {
    const env = this.config.env;
    const handlers = this.handlers();
    for (const queue of Object.values(QUEUES)) {
      if (!handlers[queue]) throw new Error(`no handler registered for queue ${queue}`);
    }
    for (const [queue, handle] of Object.entries(handlers) as [QueueName, Handler][]) {
      const connection = redisConnection(env, 'worker');
      this.connections.push(connection);
      const worker = new Worker<JobData>(
        queue,
        processorFor(queue, handle),
        {
          connection,
          prefix: queuePrefix(env, queue),
          concurrency: CONCURRENCY[queue] ?? 2,
          // A stalled job (its worker died) is handed to another worker rather than failed.
          ...lockOf(queue, env.PAYMENT_TIMEOUT_MS, env.WEBHOOK_DELIVERY_TIMEOUT_MS),
          maxStalledCount: 3,
          // After its loop fails (a failover, a connection closed), BullMQ waits this long before
          // it fetches again: its 15 s default leaves what falls due meanwhile to the sweeper.
          runRetryDelay: 1000,
        },
      );
      worker.on('failed', (job, err) => {
        this.failures.succeeded(queue); // Redis took the failure: its commands go through
        this.logger.warn({ queue, jobId: job?.id, err: err.message }, 'job failed');
      });
      worker.on('completed', () => this.failures.succeeded(queue));
      // A worker whose commands fail (CROSSSLOT, READONLY, MOVED, a cluster down) retries at once:
      // health hears of every failure, the log of one per queue and 10 s, with a count.
      worker.on('error', (err) => this.failures.failed(queue, err));
      this.workers.push(worker);
    }
    this.logger.log(`job workers started: ${this.workers.map((w) => w.name).join(', ')}`);
  }

  /**
   * SIGTERM: stop taking jobs and let in-flight ones finish (a payment call is bounded by
   * PAYMENT_TIMEOUT_MS). If Redis is away, closing cannot complete: give up after the grace
   * period — an unfinished job is safe to run again, its orders are re-read from Postgres.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const grace = this.config.env.PAYMENT_TIMEOUT_MS * 2 + 2000;
    if ((await settleWithin(Promise.allSettled(this.workers.map((w) => w.close())), grace)) === 'timeout') {
      this.logger.warn('job workers did not close in time; forcing');
      await settleWithin(Promise.allSettled(this.workers.map((w) => w.close(true))), 1000);
    }
    for (const c of this.connections) c.disconnect();
    this.failures.flushAll();
  }
}
