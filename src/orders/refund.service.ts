import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { MetricsService } from '../ops/metrics.service.js';
import { PaymentGateway } from '../payments/payment-gateway.js';
import { netCaptured } from '../payments/gateway.types.js';
import { retryDelayMs } from './backoff.js';
import { OrdersRepository } from './orders.repository.js';

/** Refund rounds back off from 1 s to at most a minute: money owed back should not wait long. */
const REFUND_RETRY_BASE_MS = 1000;

/** After this many failed refund rounds in a row, a human is told (the service keeps trying). */
export const REFUND_ALERT_AFTER = 3;

/**
 * Compensation for released orders that may have been charged (CANCELED, PAY_FAILED). Each round
 * asks the gateway for the order's payments and refunds whatever is still captured, with a key
 * derived from the payment and what was refunded before — stable across retries of the same
 * round, so a refund whose answer was lost is replayed, never paid twice. Rounds go on until the
 * watch window passes with nothing left to refund: a charge still in flight may land late.
 */
@Injectable()
export class RefundService {
  private readonly logger = new Logger(RefundService.name);

  constructor(
    private readonly db: Db,
    private readonly orders: OrdersRepository,
    private readonly gateway: PaymentGateway,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {}

  async process(id: string): Promise<void> {
    const claimed = await this.db.sql.exec(
      `UPDATE orders SET refund_next_at = now() + make_interval(secs => $2::double precision / 1000)
        WHERE id = $1 AND refund_status = 'PENDING' AND refund_next_at <= now()`,
      [id, this.config.env.PAYMENT_TIMEOUT_MS * 3 + 5000],
    );
    if (claimed !== 1) return;
    const order = (await this.orders.find(this.db.sql, id))!;
    try {
      const payments = await this.gateway.lookup(order.id);
      for (const p of payments) {
        const amount = netCaptured(p);
        if (amount === 0) continue;
        const refund = await this.gateway.refund(p.id, amount, `refund-${p.id}-${p.refundedMinor}`);
        this.metrics.refunds.inc({ result: 'refunded' });
        await this.orders.addEvent(this.db.sql, id, 'refund.succeeded', { paymentId: p.id, refundId: refund.id, amountMinor: amount });
      }
      await this.db.sql.exec(
        `UPDATE orders SET refund_failures = 0,
                refund_status = CASE WHEN refund_check_until <= now() THEN 'DONE' ELSE refund_status END,
                refund_next_at = CASE WHEN refund_check_until <= now() THEN NULL
                                      ELSE least(refund_check_until, now() + make_interval(secs => $2::double precision / 1000)) END
          WHERE id = $1 AND refund_status = 'PENDING'`,
        [id, Math.max(1000, this.config.env.PAYMENT_TIMEOUT_MS)],
      );
    } catch (err) {
      this.metrics.refunds.inc({ result: 'failed' });
      const failures = order.refund_failures + 1;
      await this.db.sql.exec(
        `UPDATE orders SET refund_failures = $2, refund_next_at = now() + make_interval(secs => $3::double precision / 1000)
          WHERE id = $1 AND refund_status = 'PENDING'`,
        [id, failures, retryDelayMs(REFUND_RETRY_BASE_MS, failures, 60_000)],
      );
      await this.orders.addEvent(this.db.sql, id, 'refund.failed', { attempt: failures, detail: (err as Error).message });
      if (failures === REFUND_ALERT_AFTER) {
        this.metrics.needsAttention.inc({ reason: 'refund_failing' });
        this.logger.error({ orderId: id, failures, alert: 'refund_failing' }, 'refund keeps failing: an operator should look at this order');
      }
    }
  }
}
