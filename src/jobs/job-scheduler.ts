import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { OrderScheduler } from '../orders/order-scheduler.js';
import type { OrderRow } from '../orders/order.types.js';
import { jobId, OrderJob, QUEUES, QueueName } from './queues.js';
import { redisConnection } from './redis.js';
import { settleWithin } from '../common/with-timeout.js';

const ENQUEUE_TIMEOUT_MS = 1000;

/** Enqueues delayed BullMQ jobs after commit. Postgres stays the truth: a lost job is only late. */
@Injectable()
export class JobScheduler extends OrderScheduler implements OnApplicationShutdown {
  readonly connection: Redis;
  readonly queues: Record<QueueName, Queue<OrderJob>>;

  constructor(config: AppConfig) {
    super();
    this.connection = redisConnection(config.env.REDIS_URL, 'producer');
    const opts = { connection: this.connection, prefix: config.env.QUEUE_PREFIX };
    this.queues = {
      [QUEUES.confirmRetry]: new Queue<OrderJob>(QUEUES.confirmRetry, opts),
      [QUEUES.reservationExpiry]: new Queue<OrderJob>(QUEUES.reservationExpiry, opts),
      [QUEUES.refunds]: new Queue<OrderJob>(QUEUES.refunds, opts),
    } as Record<QueueName, Queue<OrderJob>>;
    for (const q of Object.values(this.queues)) q.on('error', () => undefined);
  }

  async reservationCreated(order: OrderRow): Promise<void> {
    await this.add(QUEUES.reservationExpiry, order.id, jobId.expiry(order.id), untilMs(order.reservation_expires_at));
  }

  async retryScheduled(order: OrderRow): Promise<void> {
    const at = new Date(order.next_action_at ?? Date.now());
    await this.add(QUEUES.confirmRetry, order.id, jobId.retry(order.id, order.confirm_attempts, at), untilMs(at));
  }

  async refundOwed(order: OrderRow): Promise<void> {
    await this.add(QUEUES.refunds, order.id, jobId.refund(order.id, new Date(order.refund_next_at ?? Date.now())), 0);
  }

  /** After HTTP has drained: a request finishing during shutdown can still enqueue. */
  async onApplicationShutdown(): Promise<void> {
    await settleWithin(Promise.allSettled(Object.values(this.queues).map((q) => q.close())), 2000);
    this.connection.disconnect();
  }

  private async add(queue: QueueName, orderId: string, id: string, delay: number): Promise<void> {
    const opts: JobsOptions = {
      jobId: id,
      delay: Math.max(0, delay),
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 24 * 3600 },
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`enqueue to ${queue} timed out`)), ENQUEUE_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.queues[queue].add(queue, { orderId }, opts), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function untilMs(at: Date | string): number {
  // A little late rather than early: a job that fires before its step is due finds nothing to do.
  return new Date(at).getTime() - Date.now() + 100;
}
