import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { isUuid } from '../common/uuid.js';
import { duplicateSku } from '../http/schemas.js';
import { requestHash } from './idempotency.js';
import { Note, releaseMove } from './moves.js';
import { HOLDING } from './order-state.js';
import { OrderScheduler } from './order-scheduler.js';
import { MoveResult, OrderAnswer, OrderStore } from './order-store.js';
import { CreateOrderBody } from './orders.schemas.js';
import { REFUND, refundWatchMs } from './refund-state.js';
import { TryAnswer, TryEngine } from './try-engine.js';

/** The coordinator's Try and Cancel, and reads. Confirm lives in confirm.service.ts. */
@Injectable()
export class CheckoutService {
  private readonly logger = new Logger(CheckoutService.name);
  private readonly refundWatchMs: number;
  private readonly maxTtlMs: number;

  constructor(
    private readonly engine: TryEngine,
    private readonly store: OrderStore,
    private readonly scheduler: OrderScheduler,
    config: AppConfig,
  ) {
    this.refundWatchMs = refundWatchMs(config.env.PAYMENT_TIMEOUT_MS);
    this.maxTtlMs = config.env.RESERVATION_MAX_TTL_MS;
  }

  /** Try: reserve every line or nothing, once per Idempotency-Key (see TryEngine); a refusal comes back as a value. */
  async try(key: string, body: CreateOrderBody, raw: unknown): Promise<TryAnswer> {
    const dup = duplicateSku(body.items);
    if (dup) return AppError.validation([{ field: 'items', message: `each SKU may appear at most once; ${dup} repeats` }]);
    return this.engine.reserve({ key, hash: requestHash(raw), customerId: body.customerId, items: body.items });
  }

  async get(id: string): Promise<OrderAnswer> {
    const found = isUuid(id) ? await this.store.answer(id) : undefined;
    if (!found) throw AppError.notFound(`order ${id}`);
    return found;
  }

  /**
   * Extend: keep the reservation longer (a slow payment page), up to RESERVATION_MAX_TTL_MS from
   * creation; the expiry jobs follow the new deadline (a job at the old one finds nothing due).
   */
  async extend(id: string, extendByMs: number): Promise<OrderAnswer> {
    if (!isUuid(id)) throw AppError.notFound(`order ${id}`);
    const r = await this.store.extend(id, extendByMs);
    if (!r) throw AppError.notFound(`order ${id}`);
    if (r.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed`);
    if (!HOLDING.includes(r.status) || r.expired) throw new AppError('ORDER_CANCELED', `order ${id} is ${r.expired && HOLDING.includes(r.status) ? 'past its TTL' : r.status}`);
    if (r.extended) {
      await this.scheduler.expiryDue(new Date(r.expires_at!)).catch((err: unknown) =>
        this.logger.warn({ orderId: id, err: (err as Error).message }, 'could not schedule the expiry check; the sweeper will find the order'),
      );
      return { status: r.status, body: r.body };
    }
    if (r.at_cap) throw new AppError('EXTENSION_LIMIT_REACHED', `the reservation already ends at createdAt + ${this.maxTtlMs} ms`);
    return { status: r.status, body: r.body };
  }

  /** Cancel: release the stock (refunding a possible charge later). Idempotent on released orders. */
  async cancel(id: string, reason: string, opts: { data?: Record<string, unknown>; notes?: Note[] } = {}): Promise<MoveResult> {
    if (!isUuid(id)) throw AppError.notFound(`order ${id}`);
    const r = await this.store.apply(releaseMove(id, 'CANCELED', reason, { refundWatchMs: this.refundWatchMs, ...opts }));
    if (!r.found) throw AppError.notFound(`order ${id}`);
    if (r.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed; it cannot be canceled`);
    if (r.won && r.refundStatus === REFUND.pending) {
      await this.scheduler.refundOwed(r.id, r.refundNextAt).catch((err: unknown) =>
        this.logger.warn({ orderId: id, err: (err as Error).message }, 'could not schedule the refund; the sweeper will pick the order up'),
      );
    }
    return r;
  }
}
