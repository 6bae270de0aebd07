import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { Db } from '../../database/db.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import { GatewayPayment, holdEnded, isOpenHold, netCaptured } from '../../payments/gateway.types.js';
import { retryDelayMs } from '../../common/backoff.js';
import { PaymentStatus } from '../state/order-state.js';
import { lookupFor, REFUND, REFUND_OPEN, RefundStatus, refundWatchMs } from '../state/refund-state.js';
import { HoldRelease } from './hold-release.js';
import { REFUND_SQL } from './refund.sql.js';

/** Refund rounds back off from 1 s to at most a minute: money owed back should not wait long. */
const REFUND_RETRY_BASE_MS = 1000;

export interface Round {
  /** The end of this round's lease (REFUND_SQL.claimRound): its own, while no other round took the order. */
  lease: string;
  refund_failures: number;
  refund_status: RefundStatus;
  owed_for_ms: number;
  payment_status: PaymentStatus | null;
  payment_id: string | null;
  /** The watch window is over: this round, if it finds nothing, is the last. */
  watch_over: boolean;
}

/** A call of a round that did not get its answer: which kind, for the alert's reason. */
class RoundCallFailed extends Error {
  constructor(
    readonly call: 'refund' | 'void',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Compensation for released orders that may hold the customer's money (CANCELED, PAY_FAILED).
 * Each round asks the gateway for the order's payments, voids every authorization still holding
 * money (a payment held at Try: hold-release.ts) and refunds whatever is still captured, with a key
 * derived from the payment and what was refunded before — stable across retries of the same
 * round, so a refund whose answer was lost is replayed, never paid twice. Rounds go on until the
 * watch window passes with nothing left to refund or void: a charge or an authorization still in
 * flight may land late. A refund or void still failing after REFUND_ALERT_AFTER_MS needs a human
 * (and is still retried).
 */
@Injectable()
export class RefundService {
  private readonly logger = new Logger(RefundService.name);
  readonly watchMs: number;

  constructor(
    private readonly db: Db,
    private readonly gateway: PaymentGateway,
    private readonly holds: HoldRelease,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {
    this.watchMs = refundWatchMs(config.env);
  }

  async process(id: string): Promise<void> {
    const env = this.config.env;
    // A round's lease: up to three gateway calls (a lookup, a void, a refund) and the steps' margin.
    const round = await this.db.sql.one<Round>(REFUND_SQL.claimRound, [id, env.PAYMENT_TIMEOUT_MS * 3 + env.STEP_LEASE_MARGIN_MS, REFUND_OPEN]);
    if (!round) return;
    try {
      let payments: GatewayPayment[];
      try {
        payments = await this.gateway.lookup(id);
      } catch (err) {
        // What the lookup was for: a hold that may still be open, to void, else money to refund.
        throw new RoundCallFailed(lookupFor(round.payment_status), (err as Error).message);
      }
      const after: GatewayPayment[] = [];
      for (const found of payments) {
        let p = found;
        if (isOpenHold(p)) {
          const ended = await this.holds.void(id, round, p);
          if (!ended.ok) throw new RoundCallFailed('void', ended.detail);
          p = ended.payment;
        } else if (round.payment_status) await this.holds.record(id, round, p);
        after.push(p);
        await this.recordFound(id, p, round.lease);
        const amount = netCaptured(p);
        if (amount === 0) continue;
        const refund = await this.gateway.refund(p.id, amount, `refund-${p.id}-${p.refundedMinor}`).catch((err: unknown) => {
          throw new RoundCallFailed('refund', (err as Error).message);
        });
        this.metrics.refunds.inc({ result: 'refunded' });
        await this.db.sql.one(REFUND_SQL.refunded, [id, JSON.stringify({ paymentId: p.id, refundId: refund.id, amountMinor: refund.amountMinor }), round.lease]);
      }
      // The watch is over and no authorization ever turned up: nothing is held.
      if (round.watch_over && round.payment_status === 'authorizing' && !payments.some((p) => p.authorizationExpiresAt !== undefined)) await this.holds.noneFound(id);
      // The watch ends when it is over, or once the order's held payment has ended without taking
      // anything (voided, expired): nothing can land on it any more. Kept on, its rounds would fail
      // while the gateway is away and flag an order that holds nothing.
      const nothingOwed = round.payment_status !== null && holdEnded(after);
      await this.db.sql.exec(REFUND_SQL.roundDone, [id, Math.max(1000, env.PAYMENT_TIMEOUT_MS), REFUND.done, REFUND_OPEN, round.lease, round.watch_over || nothingOwed]);
    } catch (err) {
      const call = err instanceof RoundCallFailed ? err.call : 'refund';
      this.metrics.refunds.inc({ result: 'failed' });
      const failures = round.refund_failures + 1;
      const detail = { attempt: failures, call, detail: (err as Error).message };
      const recorded = await this.db.sql.exec(REFUND_SQL.roundFailed, [id, failures, retryDelayMs(REFUND_RETRY_BASE_MS, failures, 60_000), JSON.stringify(detail), REFUND_OPEN, round.lease]);
      // A round that outlived its lease while another took the order over: that one reports.
      if (recorded === 0) return;
      if (round.refund_status === REFUND.pending && Number(round.owed_for_ms) >= env.REFUND_ALERT_AFTER_MS) {
        const reason = call === 'void' ? 'void_failing' : 'refund_failing';
        const flagged = await this.db.sql.one<{ flagged: boolean }>(REFUND_SQL.needsAttention, [id, REFUND.needsAttention, REFUND.pending, JSON.stringify(detail), reason]);
        if (flagged?.flagged) {
          this.metrics.needsAttention.inc({ reason });
          const what = call === 'void' ? 'a void keeps failing (the customer\'s money is still held)' : 'refund keeps failing';
          this.logger.error({ orderId: id, failures, alert: reason }, `${what}: an operator should look at this order`);
        }
      }
    }
  }

  /**
   * Refunded at the gateway beyond what the order records: a round that died between the gateway's
   * refund and its record (or a refund made at the gateway by hand). Recorded now, from the lookup,
   * under an id of its own for that refunded total, so two rounds that both find it record it once.
   */
  private async recordFound(id: string, p: GatewayPayment, lease: string): Promise<void> {
    if (p.refundedMinor <= 0) return;
    const recorded = Number((await this.db.sql.one<{ recorded: string }>(REFUND_SQL.recordedRefunds, [id, p.id]))?.recorded ?? 0);
    if (p.refundedMinor <= recorded) return;
    const refund = { paymentId: p.id, refundId: `found-${p.id}-${p.refundedMinor}`, amountMinor: p.refundedMinor - recorded, foundByLookup: true };
    await this.db.sql.one(REFUND_SQL.refunded, [id, JSON.stringify(refund), lease]);
  }

  /** Reconciliation found money captured or held on a released order: watch it again, refund and void it. */
  async owe(id: string, reason: string): Promise<void> {
    await this.db.sql.exec(REFUND_SQL.owe, [id, this.watchMs, REFUND.pending, REFUND.needsAttention, REFUND_OPEN, JSON.stringify({ reason })]);
  }
}
