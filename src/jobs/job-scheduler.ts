import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { JobsOptions, Queue } from 'bullmq';
import { readyWithin, settleWithin } from '../common/with-timeout.js';
import { AppConfig } from '../config/app-config.js';
import { BranchScheduler } from '../inventory/participant/branch-scheduler.js';
import { OrderScheduler } from '../orders/order-scheduler.js';
import type { AttemptRef } from '../webhooks/webhook-delivery.js';
import { WebhookScheduler } from '../webhooks/webhook-scheduler.js';
import { bucketOf, JobData, jobId, QUEUES, QueueName } from './queues.js';
import { queuePrefix, RedisClient, redisConnection } from './redis.js';
import { describe, FailureTracker } from './redis-failures.js';

const ENQUEUE_TIMEOUT_MS = 1000;
/** A job fires a little after its bucket ends: early, it would find nothing due yet. */
const LATE_MS = 50;

/**
 * Enqueues delayed BullMQ jobs after commit, at a cost per time bucket, not per order: every order
 * whose TTL (or next step) falls in one SCHEDULE_BUCKET_MS bucket is resolved by one job with a
 * deterministic id, and this process asks Redis for a bucket only once. Postgres stays the truth:
 * a lost job (Redis wiped, a crash right after commit) is only late — the sweeper finds the orders.
 * So the ports' calls never reject: a job that cannot be enqueued (Redis away, a failover) is left
 * to the sweeper and logged at most once per queue and 10 s, with a count — one line per order
 * would flood the log at the rate of the checkout for as long as Redis is away.
 */
@Injectable()
export class JobScheduler implements OrderScheduler, BranchScheduler, WebhookScheduler, OnApplicationShutdown {
  readonly connection: RedisClient;
  readonly queues: Record<QueueName, Queue<JobData>>;
  private readonly bucketMs: number;
  private readonly asked = new Map<string, number>();
  private readonly logger = new Logger(JobScheduler.name);
  private readonly notEnqueued = new FailureTracker((fields) => this.logger.warn(fields, 'jobs not enqueued; the sweeper will pick the work up'));

  constructor(config: AppConfig) {
    this.bucketMs = config.env.SCHEDULE_BUCKET_MS;
    this.connection = redisConnection(config.env, 'producer');
    const queue = (name: QueueName) => new Queue<JobData>(name, { connection: this.connection, prefix: queuePrefix(config.env, name) });
    this.queues = {
      [QUEUES.confirmRetry]: queue(QUEUES.confirmRetry),
      [QUEUES.reservationExpiry]: queue(QUEUES.reservationExpiry),
      [QUEUES.refunds]: queue(QUEUES.refunds),
      [QUEUES.webhooks]: queue(QUEUES.webhooks),
    } as Record<QueueName, Queue<JobData>>;
    for (const q of Object.values(this.queues)) q.on('error', () => undefined);
  }

  /**
   * How long the queue's earliest delayed job has been due, in seconds (0: none is due). A worker
   * moves a delayed job to waiting once it is due, whenever it fetches, busy or not; one still
   * delayed past its time means no worker is fetching from the queue (none running, or its
   * connection stuck), which the sweeper hides by doing the work from Postgres, later. BullMQ keeps
   * delayed jobs in a sorted set scored by due time (ms) × 4096 plus a counter (its
   * getDelayedScore.lua); the operations spec holds this reading to real queues. The due time is the
   * enqueuing process's clock, read against this one's: hosts whose clocks differ by seconds add that.
   */
  async overdueSeconds(q: Queue<JobData>): Promise<number> {
    const earliest = await this.connection.zrange(q.keys.delayed, '0', '0', 'WITHSCORES');
    if (earliest.length < 2) return 0;
    const dueMs = Math.floor(Number(earliest[1]) / 0x1000);
    return Math.max(0, (Date.now() - dueMs) / 1000);
  }

  /**
   * Redis answers, and answers for every queue: a ping, then each queue's counts (a script over
   * several of its keys, which a cluster without the queue's hash tag refuses CROSSSLOT and a
   * node not serving it answers MOVED). Rejects with what failed, in Redis's words.
   */
  async probe(): Promise<void> {
    await this.ping();
    await Promise.all(
      Object.entries(this.queues).map(([name, q]) =>
        q.getJobCounts('waiting').catch((err: Error) => {
          throw new Error(`${name} queue: ${describe(err)}`);
        }),
      ),
    );
  }

  /** Redis answers (waiting for a connection still being made, as at start-up). */
  async ping(): Promise<void> {
    const status = this.connection.status;
    if (status === 'connecting' || status === 'connect' || status === 'reconnecting') await readyWithin(this.connection, 1000);
    await this.connection.ping();
  }

  async expiryDue(at: Date): Promise<void> {
    await this.leaveToSweeper(QUEUES.reservationExpiry, this.bucket(QUEUES.reservationExpiry, jobId.expiry, at.getTime()));
  }

  /** Outside branches fall due in the same buckets as reservations. */
  timeoutDue(at: Date): Promise<void> {
    return this.expiryDue(at);
  }

  async stepDue(at: Date): Promise<void> {
    await this.leaveToSweeper(QUEUES.confirmRetry, this.bucket(QUEUES.confirmRetry, jobId.step, at.getTime()));
  }

  async refundOwed(orderId: string, at?: Date | null): Promise<void> {
    const due = at ? new Date(at).getTime() : Date.now();
    await this.leaveToSweeper(QUEUES.refunds, this.add(QUEUES.refunds, { orderId }, jobId.refund(orderId, due), due - Date.now()));
  }

  /** A bucket job that found orders of its bucket not yet due by the database's clock: look again then. */
  async followUp(queue: QueueName, bucket: number, inMs: number): Promise<void> {
    const at = Date.now() + Math.max(0, inMs) + LATE_MS;
    await this.add(queue, { bucket }, jobId.followUp(queue, bucket, at), at - Date.now());
  }

  /**
   * Webhook attempts the poller claimed, in one round trip. The delivery row owns the retries (one
   * BullMQ attempt, nothing kept): a job that fails or is lost only waits out the row's lease.
   */
  async webhookAttempts(refs: AttemptRef[]): Promise<void> {
    const jobs = refs.map((r) => ({
      name: QUEUES.webhooks,
      data: { webhook: r.webhook, deliveryId: r.deliveryId, attempt: r.attempt },
      opts: { jobId: jobId.webhook(r.webhook, r.deliveryId, r.attempt), attempts: 1, removeOnComplete: true, removeOnFail: true },
    }));
    await this.withinEnqueueTimeout(QUEUES.webhooks, this.queues[QUEUES.webhooks].addBulk(jobs));
  }

  /** After HTTP has drained: a request finishing during shutdown can still enqueue. */
  async onApplicationShutdown(): Promise<void> {
    this.notEnqueued.flushAll();
    await settleWithin(Promise.allSettled(Object.values(this.queues).map((q) => q.close())), 2000);
    this.connection.disconnect();
  }

  /** An enqueue that fails is counted for the log, never thrown: the sweeper does the work later. */
  private async leaveToSweeper(queue: QueueName, enqueue: Promise<void>): Promise<void> {
    try {
      await enqueue;
    } catch (err) {
      this.notEnqueued.failed(queue, err as Error);
    }
  }

  private async bucket(queue: QueueName, idOf: (bucket: number) => string, at: number): Promise<void> {
    const bucket = bucketOf(at, this.bucketMs);
    const id = idOf(bucket);
    if (this.asked.has(id)) return;
    await this.add(queue, { bucket }, id, bucket - Date.now() + LATE_MS);
    this.asked.set(id, bucket);
    if (this.asked.size > 10_000) {
      const now = Date.now();
      for (const [k, b] of this.asked) if (b < now - 60_000) this.asked.delete(k);
    }
  }

  private async add(queue: QueueName, data: JobData, id: string, delay: number): Promise<void> {
    const opts: JobsOptions = {
      jobId: id,
      delay: Math.max(0, Math.round(delay)),
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      // Completed jobs go at once: the same bucket added again later is a new, harmless job.
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    };
    await this.withinEnqueueTimeout(queue, this.queues[queue].add(queue, data, opts));
  }

  private async withinEnqueueTimeout(queue: QueueName, adding: Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`enqueue to ${queue} timed out`)), ENQUEUE_TIMEOUT_MS);
    });
    try {
      await Promise.race([adding, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
