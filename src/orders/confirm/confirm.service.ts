import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import { GatewayPayment, holdEnded } from '../../payments/gateway.types.js';
import { ReservationExpiry } from '../cancel/reservation-expiry.js';
import { OrderScheduler } from '../order-scheduler.js';
import { Note, paidMove, paymentTo, pendingMove, releaseMove } from '../state/moves.js';
import { awaitAuthorizationMove } from '../state/payment-moves.js';
import { HOLDING, PAYMENT_UNSETTLED } from '../state/order-state.js';
import { MoveResult, OrderAnswer, OrderStore } from '../state/order-store.js';
import { lookUpPayments } from '../state/payment-lookup.js';
import { REFUND, refundWatchMs } from '../state/refund-state.js';
import { Captures, Planned } from './capture.js';
import { Claim, ConfirmClaims } from './claims.js';
import { decideCharge, lookupRetryDelayMs } from './confirm-policy.js';

type Source = 'client' | 'retry' | 'resume';

/**
 * What happens on Confirm, from the client's call to the last retry:
 *
 * 1. claim the attempt (one statement, batched with other Confirms): the order holds stock, its
 *    TTL has not passed, no other attempt is running, and its payment token is fixed by the first
 *    attempt. A Confirm that finds an attempt running answers the order as it stands;
 * 2. charge the gateway with the order's stable idempotency key, no transaction open;
 * 3. apply the outcome (one call, batched): succeeded → commit stock, CONFIRM_SUCCESS; declined
 *    or a final refusal → release, PAY_FAILED; unknown → CONFIRM_PENDING with the next attempt
 *    time stored on the order, and a bucketed delayed job for it;
 * 4. after CONFIRM_MAX_ATTEMPTS unknown outcomes, ask the gateway what became of the charge and
 *    finish or release on its word. At the TTL the expiry decides (cancel/reservation-expiry.ts):
 *    a Confirm or a step that finds the order past it hands over to it.
 *
 * Every step re-reads Postgres and moves the order by compare-and-set, so a duplicate job, a crash
 * between two steps or a race with Cancel or expiry is harmless.
 *
 * An order whose payment was held at Try is captured instead of charged (capture.ts), by the same
 * steps; one whose authorization is still unsettled is not claimed: its Confirm moves it to
 * CONFIRM_PENDING, and the capture follows once the authorization is held (try/authorization.ts).
 */
@Injectable()
export class ConfirmService {
  /** After a release, how long the service keeps asking the gateway for a charge to refund. */
  private readonly refundWatchMs: number;
  private readonly env: AppConfig['env'];

  constructor(
    private readonly claims: ConfirmClaims,
    private readonly captures: Captures,
    private readonly store: OrderStore,
    private readonly expiry: ReservationExpiry,
    private readonly gateway: PaymentGateway,
    private readonly scheduler: OrderScheduler,
    private readonly metrics: MetricsService,
    config: AppConfig,
  ) {
    this.env = config.env;
    this.refundWatchMs = refundWatchMs(config.env);
  }

  /**
   * POST /orders/{id}/confirm. A TRY_SUCCESS order is charged now; a CONFIRM_PENDING one answers
   * its current state and only runs its next step if that is due (backoff, the attempt limit and
   * the lookup rule hold for clients too). A finished order answers without charging.
   */
  async confirm(id: string, paymentToken: string | undefined, requestId: string | undefined): Promise<OrderAnswer | undefined> {
    const claim = await this.claims.claim({ id, paymentToken: paymentToken ?? null, job: false });
    return this.proceed(claim, requestId, 'client');
  }

  /**
   * Drives a holding order on when something is due: its TTL passed, its next retry or lookup
   * came, or a Confirm's process died mid-call. Jobs and the sweeper call it; with nothing due it
   * does nothing.
   */
  async advance(id: string): Promise<OrderAnswer | undefined> {
    const claim = await this.claims.claim({ id, paymentToken: null, job: true });
    return this.proceed(claim, undefined, claim.status === 'TRY_SUCCESS' ? 'resume' : 'retry');
  }

  private async proceed(claim: Claim, requestId: string | undefined, source: Source, again = true): Promise<OrderAnswer | undefined> {
    if (!claim.found) return undefined;
    if (claim.claimed) return this.step(claim, requestId, source);
    if (HOLDING.includes(claim.status) && claim.expired && !claim.leased) return this.expiry.expire(claim.id);
    // Past its TTL with a step in flight, an order is only answered as it stands: its expiry decides
    // once the step ends (a Confirm is not taken then, and announces nothing).
    if (source === 'client' && claim.status === 'TRY_SUCCESS' && !claim.expired && claim.paymentStatus && PAYMENT_UNSETTLED.includes(claim.paymentStatus)) {
      // The authorization is not settled: Confirm is taken (CONFIRM_PENDING), its capture follows the authorization.
      const r = await this.store.apply(awaitAuthorizationMove(claim.id));
      if (r.won || !again) return r;
      // Settled meanwhile: claim again, once.
      return this.proceed(await this.claims.claim({ id: claim.id, paymentToken: null, job: false }), requestId, source, false);
    }
    return { status: claim.status, body: claim.body! };
  }

  /** The claimed step: a charge (or capture) attempt, or the lookup once the attempts are used up. */
  private async step(c: Claim, requestId: string | undefined, source: Source): Promise<OrderAnswer> {
    if (c.status === 'CONFIRM_PENDING' && c.attempts >= this.env.CONFIRM_MAX_ATTEMPTS) {
      return this.resolveByLookup(c, `${this.env.CONFIRM_MAX_ATTEMPTS} attempts with unknown outcome`, requestId);
    }
    if (c.amountMinor === 0) {
      const call = { type: 'payment.skipped', data: { reason: 'the order total is 0: nothing to charge', source } };
      return this.paid(await this.store.apply(paidMove(c.id, 'nothing to charge', { refundWatchMs: this.refundWatchMs, call })));
    }
    const planned = c.paymentStatus ? await this.captures.attempt(c, requestId, source) : await this.charge(c, requestId, source);
    switch (planned.kind) {
      case 'paid':
        return this.paid(await this.store.apply(planned.move));
      case 'failed':
        return this.released(await this.store.apply(planned.move), planned.failure);
      case 'pending': {
        const r = await this.store.apply(planned.move);
        if (!r.won) return r; // released meanwhile (cancel, expiry), or another step took over
        if (planned.exhausted) return (await this.advance(c.id)) ?? r; // the lookup is due now
        await this.scheduleStep(r.nextActionAt);
        if (pastTtl(r.body)) return (await this.expiry.expire(c.id)) ?? r; // the attempt outlived the TTL: decide now
        return r;
      }
    }
  }

  /** One charge attempt, as the move its outcome makes. */
  private async charge(c: Claim, requestId: string | undefined, source: Source): Promise<Planned> {
    const outcome = await this.gateway.charge({
      idempotencyKey: c.paymentKey,
      amountMinor: c.amountMinor,
      currency: c.currency,
      reference: c.id,
      paymentToken: c.paymentToken,
      requestId,
    });
    const d = decideCharge({
      outcome,
      attemptsBefore: c.attempts,
      maxAttempts: this.env.CONFIRM_MAX_ATTEMPTS,
      retryBaseMs: this.env.CONFIRM_RETRY_BASE_MS,
      breakerResetMs: this.env.BREAKER_RESET_TIMEOUT_MS,
    });
    this.metrics.confirmAttempts.inc({ outcome: d.metric });
    const attempt = c.attempts + d.counted;
    const detail =
      outcome.kind === 'unknown'
        ? { reason: outcome.reason, detail: outcome.detail }
        : outcome.kind === 'refused'
          ? { status: outcome.status, detail: outcome.detail }
          : { paymentId: outcome.payment.id };
    const call: Note = { type: d.event, data: { outcome: outcome.kind, latencyMs: outcome.latencyMs, attempt, source, ...detail } };

    switch (d.kind) {
      case 'paid': {
        const payment = (outcome as { payment: GatewayPayment }).payment;
        return { kind: 'paid', move: paidMove(c.id, 'payment succeeded', { paymentId: payment.id, addAttempts: 1, refundWatchMs: this.refundWatchMs, call }) };
      }
      case 'failed': {
        // Nothing to watch for: a decline is the gateway's final answer for the order's one key
        // (a repeat replays it, never charges), and a final refusal of the order's first request
        // leaves nothing else in flight. A refusal after requests whose outcome is unknown may
        // still be followed by one of those landing: that order is watched.
        const cannotOwe = d.failure === 'declined' || c.firstSend;
        const refundWatchMs = cannotOwe ? undefined : this.refundWatchMs;
        return { kind: 'failed', failure: d.failure, move: releaseMove(c.id, 'PAY_FAILED', d.reason, { addAttempts: 1, refundWatchMs, call }) };
      }
      case 'pending': {
        const notes = d.exhausted ? [] : [{ type: 'confirm.retry_scheduled', data: { attempt: attempt + 1, inMs: d.delayMs } }];
        const detailText = outcome.kind === 'unknown' ? outcome.detail : undefined;
        // The open breaker kept this request from leaving: if no request left before it, the order is still unsent.
        const unsent = d.event === 'payment.breaker_rejected' && c.firstSend;
        return {
          kind: 'pending',
          exhausted: d.exhausted,
          move: pendingMove(c.id, d.reason, { lease: c.lease ?? undefined, addAttempts: d.counted, nextActionMs: d.delayMs, detail: detailText, call, notes, unsent }),
        };
      }
    }
  }

  /** Asks the gateway what became of the charge; does not guess when it cannot be asked. */
  private async resolveByLookup(c: Claim, why: string, requestId: string | undefined): Promise<OrderAnswer> {
    const lookup = await lookUpPayments(this.gateway, c.id, requestId);
    if (!lookup.payments) {
      const delay = lookupRetryDelayMs(this.env.CONFIRM_RETRY_BASE_MS, c.attempts);
      const r = await this.store.apply(pendingMove(c.id, 'gateway lookup failed; will ask again', { lease: c.lease ?? undefined, addAttempts: 0, nextActionMs: delay, call: lookup.call }));
      if (r.won) await this.scheduleStep(r.nextActionAt);
      return r;
    }
    const paid = lookup.payments.find((p) => p.status === 'succeeded');
    const what = c.paymentStatus ? 'capture' : 'charge';
    if (paid) {
      const move = paidMove(c.id, `${why}; the gateway reports the ${what} succeeded`, { paymentId: paid.id, capturedMinor: paid.capturedMinor, refundWatchMs: this.refundWatchMs, call: lookup.call });
      return this.paid(await this.store.apply(move));
    }
    // A held payment that ended by itself (expired, voided) needs no void and leaves nothing to
    // watch for; any other is voided with the release, and watched.
    const ended = !!c.paymentStatus && holdEnded(lookup.payments);
    const move = releaseMove(c.id, 'PAY_FAILED', `${why}; the gateway has no ${what}`, {
      refundWatchMs: ended ? undefined : this.refundWatchMs,
      call: lookup.call,
      ...(ended ? { payment: { map: paymentTo('expired', ['capturing']) } } : {}),
    });
    return this.released(await this.store.apply(move), 'exhausted');
  }

  /** A charge that lost the race to a release (Cancel, expiry) is owed back: schedule the refund now. */
  private async paid(r: MoveResult): Promise<OrderAnswer> {
    if (!r.won && r.refundStatus === REFUND.pending) await this.scheduler.refundOwed(r.id, r.refundNextAt);
    return r;
  }

  private async released(r: MoveResult, why: 'declined' | 'refused' | 'exhausted' | 'expired'): Promise<OrderAnswer> {
    if (!r.won) return r;
    this.metrics.confirmFailures.inc({ reason: why });
    if (r.refundStatus === REFUND.pending) await this.scheduler.refundOwed(r.id, r.refundNextAt);
    return r;
  }

  private async scheduleStep(at: Date | null): Promise<void> {
    if (!at) return;
    await this.scheduler.stepDue(at);
  }
}

function pastTtl(body: string): boolean {
  const at = Date.parse((JSON.parse(body) as { reservationExpiresAt: string }).reservationExpiresAt);
  return at <= Date.now();
}
