import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../common/uuid.js';
import { AppConfig } from '../../config/app-config.js';
import { Db } from '../../database/db.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import { OrderScheduler } from '../order-scheduler.js';
import { paidMove, paymentTo, releaseMove } from '../state/moves.js';
import { HOLDING, OrderStatus, PaymentStatus } from '../state/order-state.js';
import { MoveResult, OrderAnswer, OrderStore, stepLeaseMs } from '../state/order-store.js';
import { lookUpPayments } from '../state/payment-lookup.js';
import { REFUND, refundWatchMs } from '../state/refund-state.js';
import { holdEnded } from '../../payments/gateway.types.js';
import { EXPIRY_SQL } from './expiry.sql.js';

/** The expiry's lease on an order, and what its payment had come to when it was taken. */
interface ExpiryClaim {
  lease: string;
  charge_requested: boolean;
  payment_status: PaymentStatus | null;
}

interface ExtendRow {
  status: OrderStatus;
  expired: boolean;
  at_cap: boolean;
  extended: boolean;
  expires_at: Date | null;
  body: string;
}

/**
 * The reservation's deadline, `reservationExpiresAt`: a hard one, for CONFIRM_PENDING orders too.
 * Extend moves it later (up to RESERVATION_MAX_TTL_MS from creation); at the deadline an order
 * never sent to the gateway is released, and one that was is finished on the gateway's word:
 * charged → CONFIRM_SUCCESS, else CANCELED (also when the gateway cannot be asked: the refund
 * watch keeps asking). A charge still in flight is awaited. An order whose payment was held at Try
 * is asked about only if its capture was requested (`capturing`): captured → CONFIRM_SUCCESS, else
 * CANCELED with the hold voided; otherwise it is released and its hold voided at once.
 */
@Injectable()
export class ReservationExpiry {
  private readonly refundWatchMs: number;
  private readonly leaseMs: number;
  private readonly maxTtlMs: number;
  private readonly marginMs: number;

  constructor(
    private readonly db: Db,
    private readonly store: OrderStore,
    private readonly gateway: PaymentGateway,
    private readonly scheduler: OrderScheduler,
    private readonly metrics: MetricsService,
    config: AppConfig,
  ) {
    this.refundWatchMs = refundWatchMs(config.env);
    this.leaseMs = stepLeaseMs(config.env);
    this.maxTtlMs = config.env.RESERVATION_MAX_TTL_MS;
    this.marginMs = config.env.AUTHORIZATION_MARGIN_MS;
  }

  /**
   * Extend: keep the reservation longer (a slow payment page), up to RESERVATION_MAX_TTL_MS from
   * creation; the expiry jobs follow the new deadline (a job at the old one finds nothing due).
   */
  async extend(id: string, extendByMs: number): Promise<OrderAnswer> {
    if (!isUuid(id)) throw AppError.notFound(`order ${id}`);
    const r = await this.db.sql.one<ExtendRow>(EXPIRY_SQL.extend, [id, extendByMs, this.maxTtlMs, HOLDING, this.marginMs]);
    if (!r) throw AppError.notFound(`order ${id}`);
    if (r.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed`);
    if (!HOLDING.includes(r.status) || r.expired) throw new AppError('ORDER_CANCELED', `order ${id} is ${r.expired && HOLDING.includes(r.status) ? 'past its TTL' : r.status}`);
    if (r.extended) {
      await this.scheduler.expiryDue(new Date(r.expires_at!));
      return { status: r.status, body: r.body };
    }
    if (r.at_cap) throw new AppError('EXTENSION_LIMIT_REACHED', `the reservation already ends at createdAt + ${this.maxTtlMs} ms, or ${this.marginMs} ms before its payment's authorization expires`);
    return { status: r.status, body: r.body };
  }

  /**
   * At the reservation TTL: a paid order is finished, anything else released. Decided under the
   * expiry's own lease (claimExpiry), never on a read without the order's lock: a Confirm whose
   * claim was made before the deadline and commits after it, or an Extend, would otherwise find its
   * order released under it — the charge then made, and refunded, on a CANCELED order.
   */
  async expire(id: string): Promise<OrderAnswer | undefined> {
    const s = await this.store.state(id);
    if (!s) return undefined;
    if (!HOLDING.includes(s.status) || !s.expired || s.leased) return s; // a charge in flight is awaited
    const claim = await this.db.sql.one<ExpiryClaim>(EXPIRY_SQL.claimExpiry, [id, this.leaseMs, HOLDING]);
    if (!claim) return this.awaitOther(id, s); // another step holds it, or it is no longer due
    const { lease } = claim;
    const requested = claim.payment_status ? claim.payment_status === 'capturing' : claim.charge_requested;
    if (!requested) return this.released(await this.store.apply(releaseMove(id, 'CANCELED', 'reservation expired', { refundWatchMs: this.refundWatchMs, lease })));
    const lookup = await lookUpPayments(this.gateway, id, undefined);
    const paid = lookup.payments?.find((p) => p.status === 'succeeded');
    const what = claim.payment_status ? 'capture' : 'charge';
    if (paid) {
      const move = paidMove(id, `reservation expired; the gateway reports the ${what} succeeded`, { paymentId: paid.id, capturedMinor: paid.capturedMinor, refundWatchMs: this.refundWatchMs, call: lookup.call });
      const r = await this.store.apply(move);
      if (r.won) this.metrics.reservationsExpired.inc({ result: 'confirmed' });
      // A charge that lost the race to a release (Cancel) is owed back.
      if (!r.won && r.refundStatus === REFUND.pending) await this.scheduler.refundOwed(r.id, r.refundNextAt);
      return r;
    }
    const reason = lookup.payments ? `reservation expired; the gateway has no ${what}` : 'reservation expired; the gateway could not be asked';
    // A held payment that ended by itself needs no void, and leaves nothing to watch for; any other
    // is voided with the release, and watched.
    const ended = !!claim.payment_status && !!lookup.payments && holdEnded(lookup.payments);
    const payment = ended ? { map: paymentTo('expired', ['capturing']) } : undefined;
    return this.released(await this.store.apply(releaseMove(id, 'CANCELED', reason, { refundWatchMs: ended ? undefined : this.refundWatchMs, call: lookup.call, payment, lease })));
  }

  /**
   * Another step holds the order past its deadline — most often another expiry of it (its job, the
   * sweeper, a Confirm that came late), releasing it now: its outcome is awaited, up to
   * IDEMPOTENCY_WAIT_MS, so a late Confirm answers ORDER_CANCELED rather than the order as it was
   * a moment before. A Confirm's charge in flight is awaited as long, then answered as it stands.
   */
  private async awaitOther(id: string, before: OrderAnswer): Promise<OrderAnswer> {
    return (await this.store.awaitStep(id, (s) => HOLDING.includes(s.status) && s.expired && s.leased)) ?? before;
  }

  private async released(r: MoveResult): Promise<OrderAnswer> {
    if (!r.won) return r;
    this.metrics.reservationsExpired.inc({ result: 'canceled' });
    if (r.refundStatus === REFUND.pending) await this.scheduler.refundOwed(r.id, r.refundNextAt);
    return r;
  }
}
