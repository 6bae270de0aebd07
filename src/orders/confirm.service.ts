import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { MetricsService } from '../ops/metrics.service.js';
import { PaymentGateway } from '../payments/payment-gateway.js';
import { ChargeOutcome, GatewayPayment, GatewayUnavailableError } from '../payments/gateway.types.js';
import { retryDelayMs } from './backoff.js';
import { OrderLifecycle } from './order-lifecycle.js';
import { OrderScheduler } from './order-scheduler.js';
import { HOLDING } from './order-state.js';
import { isOrderId, OrderRow } from './order.types.js';
import { OrdersRepository } from './orders.repository.js';

/**
 * What happens on Confirm, from the client's call to the last retry:
 *
 * 1. note that the order may be charged from now on (committed before the call);
 * 2. charge the gateway with the order's stable idempotency key — no transaction is open;
 * 3. apply the outcome in one transaction: succeeded → commit stock, CONFIRM_SUCCESS;
 *    declined → release, PAY_FAILED; unknown → CONFIRM_PENDING with the next attempt time
 *    stored on the order, then (after commit) a delayed job for it;
 * 4. after CONFIRM_MAX_ATTEMPTS unknown outcomes, or at the reservation TTL, ask the gateway
 *    what became of the charge and finish or release on its word.
 *
 * Every step re-reads Postgres and moves the order by compare-and-set, so a duplicate job, a
 * crash between two steps or a race with Cancel or expiry is harmless.
 */
@Injectable()
export class ConfirmService {
  private readonly logger = new Logger(ConfirmService.name);

  constructor(
    private readonly db: Db,
    private readonly orders: OrdersRepository,
    private readonly lifecycle: OrderLifecycle,
    private readonly gateway: PaymentGateway,
    private readonly scheduler: OrderScheduler,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {}

  /**
   * POST /orders/{id}/confirm. A TRY_SUCCESS order is charged now; a CONFIRM_PENDING one answers
   * its current state, and only runs its next step if that is due (backoff, the attempt limit and
   * the lookup rule hold for clients too). A finished order answers without charging.
   */
  async confirm(id: string, paymentToken?: string): Promise<OrderRow | undefined> {
    const order = isOrderId(id) ? await this.orders.find(this.db.sql, id) : undefined;
    if (!order || !HOLDING.includes(order.status)) return order;
    if (order.expired) return this.expire(id);
    if (order.status === 'CONFIRM_PENDING') return this.advance(id);
    return this.attempt(order.id, paymentToken ?? null, 'client');
  }

  /**
   * Drives a holding order on when something is due: its TTL passed, its next retry or lookup
   * time came, or a Confirm's process died mid-call. Called by the jobs and the sweeper; with
   * nothing due it does nothing.
   */
  async advance(id: string): Promise<OrderRow | undefined> {
    const order = await this.orders.find(this.db.sql, id);
    if (!order || !HOLDING.includes(order.status)) return order;
    if (order.expired) return this.expire(id);
    if (!order.next_action_at) return order; // TRY_SUCCESS waiting for its client
    // Claim the due step: push next_action_at out by a lease, so a duplicate delivery (job and
    // sweeper at once) finds nothing due; if this process dies, the lease runs out and the
    // sweeper takes the order again.
    const claimed = await this.orders.claimDueStep(this.db.sql, id, this.leaseMs());
    if (!claimed) return order;
    if (claimed.status === 'CONFIRM_PENDING' && claimed.confirm_attempts >= this.config.env.CONFIRM_MAX_ATTEMPTS) {
      return this.resolveByLookup(claimed, 'retries exhausted');
    }
    return this.attempt(id, null, claimed.status === 'TRY_SUCCESS' ? 'resume' : 'retry');
  }

  /** At the reservation TTL: a paid order is finished, anything else released. */
  async expire(id: string): Promise<OrderRow | undefined> {
    const order = await this.orders.find(this.db.sql, id);
    if (!order || !HOLDING.includes(order.status) || !order.expired) return order;
    if (order.payment_requested_at === null) {
      // Never sent to the gateway: there is nothing to ask about.
      return this.released(await this.lifecycle.release(id, 'CANCELED', 'reservation expired'), 'canceled');
    }
    const payments = await this.lookup(order);
    const paid = payments?.find((p) => p.status === 'succeeded');
    if (paid) {
      this.metrics.reservationsExpired.inc({ result: 'confirmed' });
      return this.paid(await this.lifecycle.finishPaid(id, paid, 'reservation expired; the gateway reports the charge succeeded'));
    }
    const reason = payments ? 'reservation expired; the gateway has no charge' : 'reservation expired; the gateway could not be asked';
    return this.released(await this.lifecycle.release(id, 'CANCELED', reason), 'canceled');
  }

  private async attempt(id: string, paymentToken: string | null, source: 'client' | 'retry' | 'resume'): Promise<OrderRow | undefined> {
    // One UPDATE: autocommit is enough, and it is committed before the gateway sees the charge.
    const order = await this.orders.markChargeRequested(this.db.sql, id, paymentToken, this.leaseMs());
    if (!order) return this.expire(id); // expired meanwhile (or finished: expire answers it as it is)
    const outcome = await this.gateway.charge({
      idempotencyKey: order.payment_key,
      amountMinor: Number(order.amount_minor),
      currency: order.currency,
      reference: order.id,
      paymentToken: order.payment_token,
    });
    this.metrics.confirmAttempts.inc({ outcome: outcome.kind === 'succeeded' ? 'success' : outcome.kind === 'declined' ? 'declined' : outcome.reason });
    return this.applyCharge(order, outcome, source);
  }

  private async applyCharge(order: OrderRow, outcome: ChargeOutcome, source: string): Promise<OrderRow | undefined> {
    const counted = outcome.kind === 'unknown' && outcome.reason === 'circuit_open' ? 0 : 1;
    const attempt = order.confirm_attempts + counted;
    const call = { outcome: outcome.kind, latencyMs: outcome.latencyMs, attempt, source, ...(outcome.kind === 'unknown' ? { reason: outcome.reason, detail: outcome.detail } : { paymentId: outcome.payment.id }) };
    await this.orders.addEvent(this.db.sql, order.id, outcome.kind === 'unknown' && outcome.reason === 'circuit_open' ? 'payment.breaker_rejected' : 'payment.charge', call);

    if (outcome.kind === 'succeeded') return this.paid(await this.lifecycle.finishPaid(order.id, outcome.payment, 'payment succeeded', {}, counted));
    if (outcome.kind === 'declined') return this.released(await this.lifecycle.release(order.id, 'PAY_FAILED', 'payment declined', {}, counted), 'declined');

    const max = this.config.env.CONFIRM_MAX_ATTEMPTS;
    const exhausted = attempt >= max;
    const backoff = retryDelayMs(this.config.env.CONFIRM_RETRY_BASE_MS, Math.max(1, attempt));
    // An open breaker will refuse everything until its reset timeout: asking sooner only adds noise.
    const delay = counted ? backoff : Math.max(backoff, retryDelayMs(this.config.env.BREAKER_RESET_TIMEOUT_MS, 1));
    const pending = await this.db.tx(async (sql) => {
      const moved = await this.orders.transition(sql, order.id, 'CONFIRM_PENDING', `payment outcome unknown (${outcome.reason})`, {
        patch: { addAttempts: counted, nextActionInMs: exhausted ? this.leaseMs() : delay, failureReason: outcome.detail },
      });
      if (moved && !exhausted) await this.orders.addEvent(sql, order.id, 'confirm.retry_scheduled', { attempt: attempt + 1, inMs: delay, at: moved.next_action_at });
      return moved;
    });
    if (!pending) return this.orders.find(this.db.sql, order.id); // canceled or expired meanwhile
    if (exhausted) return this.resolveByLookup(pending, `${max} attempts with unknown outcome`);
    await this.schedule(pending);
    return pending;
  }

  /** Asks the gateway what became of the charge; does not guess when it cannot be asked. */
  private async resolveByLookup(order: OrderRow, why: string): Promise<OrderRow | undefined> {
    const payments = await this.lookup(order);
    if (!payments) {
      const delay = retryDelayMs(this.config.env.CONFIRM_RETRY_BASE_MS, order.confirm_attempts, 60_000);
      const pending = await this.db.tx((sql) =>
        this.orders.transition(sql, order.id, 'CONFIRM_PENDING', 'gateway lookup failed; will ask again', {
          from: ['CONFIRM_PENDING'],
          patch: { nextActionInMs: delay },
        }),
      );
      if (pending) await this.schedule(pending);
      return pending ?? this.orders.find(this.db.sql, order.id);
    }
    const paid = payments.find((p) => p.status === 'succeeded');
    if (paid) return this.paid(await this.lifecycle.finishPaid(order.id, paid, `${why}; the gateway reports the charge succeeded`));
    return this.released(await this.lifecycle.release(order.id, 'PAY_FAILED', `${why}; the gateway has no charge`), 'exhausted');
  }

  private async lookup(order: OrderRow): Promise<GatewayPayment[] | undefined> {
    const started = performance.now();
    try {
      const payments = await this.gateway.lookup(order.id);
      await this.orders.addEvent(this.db.sql, order.id, 'payment.lookup', {
        outcome: 'answered',
        latencyMs: Math.round(performance.now() - started),
        payments: payments.map((p) => ({ id: p.id, status: p.status, amountMinor: p.amountMinor, refundedMinor: p.refundedMinor })),
      });
      return payments;
    } catch (err) {
      const reason = err instanceof GatewayUnavailableError ? err.reason : 'error';
      await this.orders.addEvent(this.db.sql, order.id, reason === 'circuit_open' ? 'payment.breaker_rejected' : 'payment.lookup', {
        outcome: 'failed',
        reason,
        detail: (err as Error).message,
        latencyMs: Math.round(performance.now() - started),
      });
      return undefined;
    }
  }

  /** A charge that lost the race to a release (Cancel, expiry) is owed back: schedule the refund now. */
  private async paid(result: { order: OrderRow; won: boolean }): Promise<OrderRow> {
    if (!result.won) await this.refundIfOwed(result.order);
    return result.order;
  }

  private async released(result: { order: OrderRow; won: boolean }, metric: string): Promise<OrderRow> {
    if (result.won && result.order.failure_reason?.startsWith('reservation expired')) this.metrics.reservationsExpired.inc({ result: metric });
    if (result.won && result.order.status === 'PAY_FAILED') this.metrics.confirmFailures.inc({ reason: metric });
    if (result.won) await this.refundIfOwed(result.order);
    return result.order;
  }

  private async refundIfOwed(order: OrderRow): Promise<void> {
    if (order.refund_status !== 'PENDING') return;
    await this.scheduler.refundOwed(order).catch((err) => this.logger.warn({ orderId: order.id, err: String(err) }, 'refund job not scheduled; the sweeper will pick it up'));
  }

  private async schedule(order: OrderRow): Promise<void> {
    try {
      await this.scheduler.retryScheduled(order);
    } catch (err) {
      this.logger.warn({ orderId: order.id, err: (err as Error).message }, 'retry job not scheduled; the sweeper will pick the order up');
    }
  }

  private leaseMs(): number {
    return this.config.env.PAYMENT_TIMEOUT_MS * 2 + 5000;
  }
}
