import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../common/uuid.js';
import { AppConfig } from '../../config/app-config.js';
import { OrderScheduler } from '../order-scheduler.js';
import { Note, releaseMove } from '../state/moves.js';
import { MoveResult, OrderStore } from '../state/order-store.js';
import { REFUND, refundWatchMs } from '../state/refund-state.js';

/**
 * Cancel, by the client (POST /orders/{id}/cancel) or an operator (force-cancel, bulk cancel):
 * the stock goes back through the barrier, and an order that may have been charged is owed a
 * refund check (refund.service.ts). Idempotent on released orders; a paid order is refused.
 */
@Injectable()
export class CancelService {
  private readonly refundWatchMs: number;

  constructor(
    private readonly store: OrderStore,
    private readonly scheduler: OrderScheduler,
    config: AppConfig,
  ) {
    this.refundWatchMs = refundWatchMs(config.env);
  }

  async cancel(id: string, reason: string, opts: { data?: Record<string, unknown>; notes?: Note[] } = {}): Promise<MoveResult> {
    if (!isUuid(id)) throw AppError.notFound(`order ${id}`);
    const r = await this.store.apply(releaseMove(id, 'CANCELED', reason, { refundWatchMs: this.refundWatchMs, ...opts }));
    if (!r.found) throw AppError.notFound(`order ${id}`);
    if (r.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed; it cannot be canceled`);
    if (r.won && r.refundStatus === REFUND.pending) {
      await this.scheduler.refundOwed(r.id, r.refundNextAt);
    }
    return r;
  }
}
