import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import { PeriodicJobs } from '../database/periodic.js';
import { AttemptRef, WebhookDelivery } from './webhook-delivery.js';
import { deliveryLeaseMs } from './webhook-sender.js';
import type { DeliveryStatus } from './webhooks.schemas.js';
import { WebhookScheduler } from './webhook-scheduler.js';
import { WEBHOOKS_SQL } from './webhooks.sql.js';

const POLL_MS = 500;
const BATCH = 200;
/** Most batches one poll takes before letting the next interval come round. */
const ROUNDS = 10;
/** Attempts made here at once when Redis cannot take the jobs. */
const DIRECT_PARALLEL = 16;
const PENDING: DeliveryStatus = 'pending';

/**
 * Postgres is the outbox, Redis only spreads the sending: one process at a time (a session
 * advisory lock) claims due deliveries under a lease and hands each attempt to the `webhooks`
 * queue, whose workers on every worker process send it. A job lost with Redis, or with a process
 * SIGKILLed, only delays its delivery: the lease runs out and the poller claims it again. While
 * Redis is away the poller sends them itself.
 */
@Injectable()
export class WebhookPoller implements OnApplicationBootstrap {
  private readonly logger = new Logger(WebhookPoller.name);
  private redisDown = false;
  private readonly leaseMs: number;

  constructor(
    private readonly db: Db,
    private readonly periodic: PeriodicJobs,
    private readonly scheduler: WebhookScheduler,
    private readonly delivery: WebhookDelivery,
    config: AppConfig,
  ) {
    this.leaseMs = deliveryLeaseMs(config.env.WEBHOOK_DELIVERY_TIMEOUT_MS);
  }

  onApplicationBootstrap(): void {
    this.periodic.register('webhook-poller', POLL_MS, SESSION_LOCKS.webhookSweep, () => this.poll());
  }

  /** One pass (the caller holds the poller's lock); returns how many attempts it handed out. */
  async poll(): Promise<number> {
    let handed = 0;
    for (let round = 0; round < ROUNDS && !this.periodic.stopped(); round++) {
      const due = await this.db.sql.rows<{ webhook_name: string; id: string; attempts: number }>(WEBHOOKS_SQL.claimDue, [this.leaseMs, BATCH, PENDING]);
      if (due.length === 0) break;
      const refs: AttemptRef[] = due.map((d) => ({ webhook: d.webhook_name, deliveryId: d.id, attempt: d.attempts }));
      await this.handOut(refs);
      handed += refs.length;
      if (due.length < BATCH) break;
    }
    return handed;
  }

  private async handOut(refs: AttemptRef[]): Promise<void> {
    try {
      await this.scheduler.webhookAttempts(refs);
      if (this.redisDown) this.logger.log('webhook attempts go through the queue again');
      this.redisDown = false;
      return;
    } catch (err) {
      if (!this.redisDown) this.logger.warn({ err: (err as Error).message }, 'cannot enqueue webhook attempts; sending them from the poller until Redis is back');
      this.redisDown = true;
    }
    for (let i = 0; i < refs.length && !this.periodic.stopped(); i += DIRECT_PARALLEL) {
      await Promise.all(
        refs.slice(i, i + DIRECT_PARALLEL).map((ref) =>
          this.delivery.attempt(ref).catch((err: unknown) => this.logger.warn({ webhook: ref.webhook, deliveryId: ref.deliveryId, err: (err as Error).message }, 'webhook attempt could not be recorded; it is claimed again after its lease')),
        ),
      );
    }
  }
}
