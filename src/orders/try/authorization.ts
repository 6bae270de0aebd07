import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { Db } from '../../database/db.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { GatewayPayment } from '../../payments/gateway.types.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import { OrderScheduler } from '../order-scheduler.js';
import { Note, paymentTo, releaseMove } from '../state/moves.js';
import { authorizationPendingMove, authorizedMove, paymentMove } from '../state/payment-moves.js';
import { HOLDING, PAYMENT_UNSETTLED, PaymentStatus, TERMINAL } from '../state/order-state.js';
import { MoveResult, OrderAnswer, OrderStore, stepLeaseMs } from '../state/order-store.js';
import { lookUpPayments } from '../state/payment-lookup.js';
import { lookupAgainInMs, nextAttempt } from '../state/payment-policy.js';
import { REFUND, refundWatchMs } from '../state/refund-state.js';
import { AUTHORIZATION_SQL } from './authorization.sql.js';
import { AUTHORIZATION_KEY_PREFIX } from './try-engine.js';

interface Attempt {
  id: string;
  amountMinor: number;
  currency: string;
  key: string;
  token: string | null;
  attemptsBefore: number;
}

interface ClaimRow {
  amount_minor: string;
  currency: string;
  payment_key: string;
  payment_token: string | null;
  authorize_attempts: number;
}

type Source = 'try' | 'retry';

const DECLINED = paymentTo('declined', PAYMENT_UNSETTLED);

/**
 * The authorization of an order whose Try holds its payment (API.md "Payment held at Try"): asked
 * right after the Try's batch committed the stock (no transaction open, the group-commit engine
 * never waits for the gateway), with the order's key. Its outcome moves the order by
 * compare-and-set (tcc_apply): authorized — the money is held, and the reservation ends at least
 * AUTHORIZATION_MARGIN_MS before the authorization does; declined or refused — PAY_FAILED, the
 * stock released; unknown — `authorizing`, settled in the background: retried with the same key
 * and backoff, then, after CONFIRM_MAX_ATTEMPTS unknown outcomes, looked up by reference.
 *
 * The Try's batch leaves the order leased for as long as one attempt may take and due once that
 * lease ends, so a process that dies between the commit and the answer leaves an order the
 * sweeper finds in Postgres. An authorization that lands on an order released meanwhile is owed a
 * void (the money-back round, cancel/refund.service.ts).
 */
@Injectable()
export class Authorizations {
  private readonly env: AppConfig['env'];
  private readonly leaseMs: number;
  private readonly watchMs: number;

  constructor(
    private readonly db: Db,
    private readonly store: OrderStore,
    private readonly gateway: PaymentGateway,
    private readonly scheduler: OrderScheduler,
    private readonly metrics: MetricsService,
    config: AppConfig,
  ) {
    this.env = config.env;
    this.leaseMs = stepLeaseMs(config.env);
    this.watchMs = refundWatchMs(config.env);
  }

  /** The Try's own attempt, for an order its batch just created (it holds the attempt's lease). */
  atTry(order: { id: string; amountMinor: number; currency: string }, paymentToken: string, requestId: string | undefined): Promise<OrderAnswer> {
    return this.attempt({ ...order, key: `${AUTHORIZATION_KEY_PREFIX}${order.id}`, token: paymentToken, attemptsBefore: 0 }, 'try', requestId);
  }

  /**
   * The background step of an unsettled authorization, when it is due (jobs, the sweeper, an
   * operator): the next attempt, or the lookup once the attempts are used up. Nothing due: the
   * order as it stands.
   */
  async settle(id: string): Promise<OrderAnswer | undefined> {
    const row = await this.db.sql.one<ClaimRow>(AUTHORIZATION_SQL.claim, [id, this.leaseMs, HOLDING, PAYMENT_UNSETTLED]);
    if (!row) return this.store.answer(id);
    const a: Attempt = { id, amountMinor: Number(row.amount_minor), currency: row.currency, key: row.payment_key, token: row.payment_token, attemptsBefore: row.authorize_attempts };
    if (a.attemptsBefore >= this.env.CONFIRM_MAX_ATTEMPTS) return this.byLookup(a);
    return this.attempt(a, 'retry', undefined);
  }

  /**
   * A replay of a Try whose authorization is still in flight waits for it (up to
   * IDEMPOTENCY_WAIT_MS), then answers the order as it stands.
   */
  async awaitInFlight(id: string): Promise<OrderAnswer | undefined> {
    return this.store.awaitStep(id, (s) => s.payment_status === 'authorizing' && s.leased);
  }

  private async attempt(a: Attempt, source: Source, requestId: string | undefined): Promise<OrderAnswer> {
    const outcome = await this.gateway.authorize({ idempotencyKey: a.key, amountMinor: a.amountMinor, currency: a.currency, reference: a.id, paymentToken: a.token, requestId });
    const attempt = a.attemptsBefore + 1;
    const base = { outcome: outcome.kind, latencyMs: outcome.latencyMs, attempt, source };
    switch (outcome.kind) {
      case 'succeeded':
        return this.held(a.id, outcome.payment, { type: 'payment.authorize', data: { ...base, paymentId: outcome.payment.id } });
      case 'declined':
        return this.declined(a.id, 'payment declined', { type: 'payment.authorize', data: { ...base, paymentId: outcome.payment.id } }, 'declined');
      case 'refused': {
        // A decline is the gateway's final answer for the order's one key; a refusal is only this
        // request's. After an earlier request — one whose outcome is unknown, or the Try's own,
        // sent and never recorded (its process died: a background retry counts from 0 then) — the
        // money may be held: the release watches and voids what it finds (as Confirm's does).
        const watchMs = a.attemptsBefore > 0 || source !== 'try' ? this.watchMs : undefined;
        const call: Note = { type: 'payment.authorize', data: { ...base, status: outcome.status, detail: outcome.detail } };
        return this.declined(a.id, `authorization refused by the gateway (HTTP ${outcome.status})`, call, 'refused', 'declined', watchMs);
      }
      case 'unknown': {
        const n = nextAttempt({ reason: outcome.reason, attemptsBefore: a.attemptsBefore, maxAttempts: this.env.CONFIRM_MAX_ATTEMPTS, retryBaseMs: this.env.CONFIRM_RETRY_BASE_MS, breakerResetMs: this.env.BREAKER_RESET_TIMEOUT_MS });
        const call: Note = { type: n.breaker ? 'payment.breaker_rejected' : 'payment.authorize', data: { ...base, attempt: a.attemptsBefore + n.counted, reason: outcome.reason, detail: outcome.detail } };
        const notes = n.exhausted ? [] : [{ type: 'authorization.retry_scheduled', data: { attempt: a.attemptsBefore + n.counted + 1, inMs: n.delayMs } }];
        const r = await this.store.apply(
          authorizationPendingMove(a.id, `authorization outcome unknown (${outcome.reason})`, { attemptsBefore: a.attemptsBefore, addAttempts: n.counted, nextActionMs: n.delayMs, call, notes }),
        );
        if (!r.won) return r;
        this.scheduleStep(r.nextActionAt);
        // The attempts are used up: the lookup is due now (in the background for a Try, whose answer does not wait).
        if (n.exhausted && source === 'retry') return (await this.settle(a.id)) ?? r;
        return r;
      }
    }
  }

  /** Asks the gateway what became of the authorization; does not guess when it cannot be asked. */
  private async byLookup(a: Attempt): Promise<OrderAnswer> {
    const lookup = await lookUpPayments(this.gateway, a.id, undefined);
    if (!lookup.payments) {
      const r = await this.store.apply(
        authorizationPendingMove(a.id, 'gateway lookup failed; will ask again', {
          attemptsBefore: a.attemptsBefore,
          addAttempts: 0,
          nextActionMs: lookupAgainInMs(this.env.CONFIRM_RETRY_BASE_MS, a.attemptsBefore),
          call: lookup.call,
        }),
      );
      if (r.won) this.scheduleStep(r.nextActionAt);
      return r;
    }
    const why = `${a.attemptsBefore} authorization attempts with unknown outcome`;
    const held = lookup.payments.find((p) => p.status === 'authorized');
    if (held) return this.held(a.id, held, lookup.call);
    if (lookup.payments.some((p) => p.status === 'expired')) {
      return this.declined(a.id, `${why}; the gateway's authorization expired`, lookup.call, 'exhausted', 'expired');
    }
    // Nothing held now; one still in flight may land: the release keeps watching and voids it.
    return this.declined(a.id, `${why}; the gateway has no authorization`, lookup.call, 'exhausted', 'declined', this.watchMs);
  }

  private async held(id: string, payment: GatewayPayment, call: Note): Promise<MoveResult> {
    const hold = { paymentId: payment.id, amountMinor: payment.amountMinor, expiresAt: payment.authorizationExpiresAt, marginMs: this.env.AUTHORIZATION_MARGIN_MS };
    const r = await this.store.apply(authorizedMove(id, hold, { refundWatchMs: this.watchMs, call }));
    if (r.won) {
      // The reservation may end sooner now (the authorization's expiry less the margin).
      const expiresAt = (JSON.parse(r.body) as { reservationExpiresAt: string }).reservationExpiresAt;
      void this.scheduler.expiryDue(new Date(expiresAt));
      // A Confirm waited for this authorization: its capture is due now.
      if (r.status === 'CONFIRM_PENDING') this.scheduleStep(new Date());
    } else if (r.refundStatus === REFUND.pending) {
      // Held for an order released meanwhile: the money-back round voids it.
      void this.scheduler.refundOwed(r.id, r.refundNextAt);
    }
    return r;
  }

  /** No money held (declined, refused, none found): PAY_FAILED and the stock released, or — released already — the payment's state recorded. */
  private async declined(
    id: string,
    reason: string,
    call: Note,
    failure: 'declined' | 'refused' | 'exhausted',
    to: PaymentStatus = 'declined',
    watchMs?: number,
  ): Promise<MoveResult> {
    const payment = { from: PAYMENT_UNSETTLED, map: to === 'declined' ? DECLINED : paymentTo(to, PAYMENT_UNSETTLED) };
    const r = await this.store.apply(releaseMove(id, 'PAY_FAILED', reason, { refundWatchMs: watchMs, call, payment }));
    if (r.won) {
      this.metrics.confirmFailures.inc({ reason: failure });
      if (r.refundStatus === REFUND.pending) void this.scheduler.refundOwed(r.id, r.refundNextAt);
      return r;
    }
    if (r.found && TERMINAL.includes(r.status)) return this.store.apply(paymentMove(id, reason, payment));
    return r;
  }

  private scheduleStep(at: Date | null): void {
    if (!at) return;
    void this.scheduler.stepDue(at);
  }
}
