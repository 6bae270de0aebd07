import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { InventoryService } from '../inventory/inventory.service.js';
import type { GatewayPayment } from '../payments/gateway.types.js';
import { HOLDING, OrderStatus } from './order-state.js';
import { OrderRow } from './order.types.js';
import { OrdersRepository } from './orders.repository.js';

/** A timeline entry written in the move's transaction, only if the move wins (operator actions). */
export interface MoveNote {
  type: string;
  data: Record<string, unknown>;
}

/**
 * The moves that end an order, each one local transaction: the order's compare-and-set and the
 * inventory branch's Confirm or Cancel (barrier-guarded) commit together or not at all. A move
 * that loses its compare-and-set changes nothing and returns the order as it now is.
 */
@Injectable()
export class OrderLifecycle {
  /** After a release, how long the service keeps asking the gateway for a charge to refund. */
  readonly refundWatchMs: number;

  constructor(
    private readonly db: Db,
    private readonly orders: OrdersRepository,
    private readonly inventory: InventoryService,
    config: AppConfig,
  ) {
    this.refundWatchMs = Math.max(60_000, 10 * config.env.PAYMENT_TIMEOUT_MS);
  }

  /** Paid: commit the stock, CONFIRM_SUCCESS. A charge on an order already released is owed back. */
  async finishPaid(
    id: string,
    payment: GatewayPayment | null,
    reason: string,
    data: Record<string, unknown> = {},
    addAttempts = 0,
    note?: MoveNote,
  ): Promise<{ order: OrderRow; won: boolean }> {
    return this.db.tx(async (sql) => {
      const moved = await this.orders.transition(sql, id, 'CONFIRM_SUCCESS', reason, {
        patch: { paymentId: payment?.id, forceConfirmed: payment === null, failureReason: null, addAttempts },
        data,
      });
      if (moved) {
        if (note) await this.orders.addEvent(sql, id, note.type, note.data);
        await this.inventory.confirm(sql, moved.transaction_id);
        return { order: moved, won: true };
      }
      const current = (await this.orders.find(sql, id))!;
      if (payment && current.status !== 'CONFIRM_SUCCESS') {
        // Released while the charge was in flight: the stock is gone, so the money goes back.
        await this.orders.owesRefund(sql, id, this.refundWatchMs, `charge ${payment.id} succeeded after the order became ${current.status}`);
        return { order: (await this.orders.find(sql, id))!, won: false };
      }
      return { order: current, won: false };
    });
  }

  /** Release the stock and end the order PAY_FAILED or CANCELED; a possible charge is owed back. */
  async release(
    id: string,
    to: Extract<OrderStatus, 'PAY_FAILED' | 'CANCELED'>,
    reason: string,
    data: Record<string, unknown> = {},
    addAttempts = 0,
    note?: MoveNote,
  ): Promise<{ order: OrderRow; won: boolean }> {
    return this.db.tx(async (sql) => {
      const moved = await this.orders.transition(sql, id, to, reason, {
        from: HOLDING,
        patch: { failureReason: reason, refundOwedForMs: this.refundWatchMs, addAttempts },
        data,
      });
      if (!moved) return { order: (await this.orders.find(sql, id))!, won: false };
      if (note) await this.orders.addEvent(sql, id, note.type, note.data);
      await this.inventory.cancel(sql, moved.transaction_id);
      return { order: moved, won: true };
    });
  }
}

