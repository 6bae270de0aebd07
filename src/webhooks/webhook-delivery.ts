import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { retryDelayMs } from '../common/backoff.js';
import { WebhookSender } from './webhook-sender.js';
import type { DeliveryStatus } from './webhooks.schemas.js';
import { WEBHOOKS_SQL } from './webhooks.sql.js';

/** One attempt of one delivery: what a job carries (Postgres holds the rest). */
export interface AttemptRef {
  webhook: string;
  deliveryId: string;
  /** Attempts made before this one: the attempt is stale once the row's count has moved on. */
  attempt: number;
}

export type AttemptOutcome = 'delivered' | 'retried' | 'failed' | 'stale';

const PENDING: DeliveryStatus = 'pending';
const DELIVERED: DeliveryStatus = 'delivered';
const FAILED: DeliveryStatus = 'failed';
/** The backoff doubles without the orders' one-hour cap: the contract's formula holds to the last attempt. */
const MAX_DELAY_MS = 7 * 24 * 3600_000;

/**
 * Makes one attempt: re-reads the delivery (a duplicate or stale job finds it moved on and does
 * nothing), POSTs it signed, and records the outcome as a compare-and-set on the attempt count, so
 * two runners of one attempt record it once. A failed attempt n waits WEBHOOK_RETRY_BASE_MS ×
 * 2^(n-1) (±20 %) for the next; the WEBHOOK_MAX_ATTEMPTS-th failure marks the delivery failed (or
 * the one attempt its retry route gave it, attempt_limit).
 */
@Injectable()
export class WebhookDelivery implements OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDelivery.name);
  private readonly sender: WebhookSender;

  constructor(
    private readonly db: Db,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {
    this.sender = new WebhookSender(config.env.WEBHOOK_DELIVERY_TIMEOUT_MS);
  }

  async attempt(ref: AttemptRef): Promise<AttemptOutcome> {
    const { webhook, deliveryId, attempt } = ref;
    const row = await this.db.sql.one<{ payload: string; url: string; secret: string }>(WEBHOOKS_SQL.attempt, [webhook, deliveryId, attempt, PENDING]);
    if (!row) return 'stale';
    const result = await this.sender.send(row.url, row.secret, { id: deliveryId, body: row.payload });
    const made = attempt + 1;
    if (result.ok) {
      const won = await this.db.sql.exec(WEBHOOKS_SQL.delivered, [webhook, deliveryId, attempt, DELIVERED, PENDING]);
      if (!won) return 'stale';
      this.metrics.webhookDeliveries.inc({ outcome: 'delivered' });
      this.logger.debug({ webhook, deliveryId, attempts: made, status: result.status }, 'webhook delivered');
      return 'delivered';
    }
    const env = this.config.env;
    const delayMs = retryDelayMs(env.WEBHOOK_RETRY_BASE_MS, made, MAX_DELAY_MS);
    const after = await this.db.sql.one<{ status: DeliveryStatus }>(WEBHOOKS_SQL.attemptFailed, [
      webhook,
      deliveryId,
      attempt,
      env.WEBHOOK_MAX_ATTEMPTS,
      delayMs,
      PENDING,
      FAILED,
      result.error,
      result.status ?? null,
      result.body || null,
    ]);
    if (!after) return 'stale';
    const outcome = after.status === FAILED ? 'failed' : 'retried';
    this.metrics.webhookDeliveries.inc({ outcome });
    if (outcome === 'failed') this.logger.warn({ webhook, deliveryId, attempts: made, error: result.error }, 'webhook delivery failed; it is listed for operators to retry');
    else this.logger.log({ webhook, deliveryId, attempts: made, error: result.error, retryInMs: delayMs }, 'webhook attempt failed; retrying');
    return outcome;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sender.close();
  }
}
