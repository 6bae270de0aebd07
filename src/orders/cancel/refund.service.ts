import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { Db } from '../../database/db.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import { netCaptured } from '../../payments/gateway.types.js';
import { retryDelayMs } from '../../common/backoff.js';
import { REFUND, REFUND_OPEN, RefundStatus, refundWatchMs } from '../state/refund-state.js';
import { REFUND_SQL } from './refund.sql.js';

/** Refund rounds back off from 1 s to at most a minute: money owed back should not wait long. */
const REFUND_RETRY_BASE_MS = 1000;

/**
 * Compensation for released orders that may have been charged (CANCELED, PAY_FAILED). Each round
 * asks the gateway for the order's payments and refunds whatever is still captured, with a key
 * derived from the payment and what was refunded before — stable across retries of the same
 * round, so a refund whose answer was lost is replayed, never paid twice. Rounds go on until the
 * watch window passes with nothing left to refund: a charge still in flight may land late. A
 * refund still failing after REFUND_ALERT_AFTER_MS needs a human (and is still retried).
 */
@Injectable()
export class RefundService {
  private readonly logger = new Logger(RefundService.name);
  readonly watchMs: number;

  constructor(
    private readonly db: Db,
    private readonly gateway: PaymentGateway,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {
    this.watchMs = refundWatchMs(config.env.PAYMENT_TIMEOUT_MS);
  }

  async process(id: string): Promise<void> {
    const env = this.config.env;
    const round = await this.db.sql.one<{ refund_failures: number; refund_status: RefundStatus; owed_for_ms: number }>(REFUND_SQL.claimRound, [
      id,
      env.PAYMENT_TIMEOUT_MS * 3 + 5000,
      REFUND_OPEN,
    ]);
    if (!round) return;
    try {
      const payments = await this.gateway.lookup(id);
      for (const p of payments) {
        const amount = netCaptured(p);
        if (amount === 0) continue;
        const refund = await this.gateway.refund(p.id, amount, `refund-${p.id}-${p.refundedMinor}`);
        this.metrics.refunds.inc({ result: 'refunded' });
        await this.db.sql.one(REFUND_SQL.refunded, [id, JSON.stringify({ paymentId: p.id, refundId: refund.id, amountMinor: amount })]);
      }
      await this.db.sql.exec(REFUND_SQL.roundDone, [id, Math.max(1000, env.PAYMENT_TIMEOUT_MS), REFUND.done, REFUND_OPEN]);
    } catch (err) {
      this.metrics.refunds.inc({ result: 'failed' });
      const failures = round.refund_failures + 1;
      const detail = { attempt: failures, detail: (err as Error).message };
      await this.db.sql.exec(REFUND_SQL.roundFailed, [id, failures, retryDelayMs(REFUND_RETRY_BASE_MS, failures, 60_000), JSON.stringify(detail), REFUND_OPEN]);
      if (round.refund_status === REFUND.pending && Number(round.owed_for_ms) >= env.REFUND_ALERT_AFTER_MS) {
        const flagged = await this.db.sql.one<{ flagged: boolean }>(REFUND_SQL.needsAttention, [id, REFUND.needsAttention, REFUND.pending, JSON.stringify(detail)]);
        if (flagged?.flagged) {
          this.metrics.needsAttention.inc({ reason: 'refund_failing' });
          this.logger.error({ orderId: id, failures, alert: 'refund_failing' }, 'refund keeps failing: an operator should look at this order');
        }
      }
    }
  }

  /** Reconciliation found money captured on a released order: watch it again and refund it. */
  async owe(id: string, reason: string): Promise<void> {
    await this.db.sql.exec(REFUND_SQL.owe, [id, this.watchMs, REFUND.pending, REFUND.needsAttention, REFUND_OPEN, JSON.stringify({ reason })]);
  }
}
