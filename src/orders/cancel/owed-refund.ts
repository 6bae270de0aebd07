import type { Logger } from '@nestjs/common';
import type { OrderScheduler } from '../order-scheduler.js';
import type { MoveResult } from '../state/order-store.js';

/**
 * Asks for the first refund round of an order a move left owing one (a release after a charge was
 * requested, or a charge that lost to a release). Only an accelerator: the sweeper finds the order
 * by its refund_next_at when the call is lost.
 */
export async function scheduleOwedRefund(scheduler: OrderScheduler, logger: Logger, r: MoveResult): Promise<void> {
  await scheduler.refundOwed(r.id, r.refundNextAt).catch((err: unknown) => logger.warn({ orderId: r.id, err: String(err) }, 'refund job not scheduled; the sweeper will pick it up'));
}
