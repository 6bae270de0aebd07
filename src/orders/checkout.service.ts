import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';
import { AppError } from '../common/errors.js';
import { Db, pgCode, PG } from '../database/db.js';
import { InventoryService, LineRequest } from '../inventory/inventory.service.js';
import type { ReservedLine } from '../inventory/stock.sql.js';
import { requestHash } from './idempotency.js';
import { MoveNote, OrderLifecycle } from './order-lifecycle.js';
import { OrderScheduler } from './order-scheduler.js';
import { isOrderId, OrderRow } from './order.types.js';
import { OrdersRepository } from './orders.repository.js';

export interface TryRequest {
  customerId: string;
  items: LineRequest[];
}

/** The coordinator's Try and Cancel, and reads. Confirm lives in confirm.service.ts. */
@Injectable()
export class CheckoutService {
  private readonly logger = new Logger(CheckoutService.name);

  constructor(
    private readonly db: Db,
    private readonly orders: OrdersRepository,
    private readonly inventory: InventoryService,
    private readonly lifecycle: OrderLifecycle,
    private readonly scheduler: OrderScheduler,
    private readonly config: AppConfig,
  ) {}

  /**
   * Try: one local transaction claims the Idempotency-Key (a unique insert: a concurrent duplicate
   * waits on it, then finds the first order), then runs the inventory branch's Try, which calls
   * back to write the order just before it locks the SKU rows. Any refusal rolls everything
   * back, the key included.
   */
  async try(key: string, body: TryRequest, rawBody: unknown): Promise<{ order: OrderRow; created: boolean }> {
    const hash = requestHash(rawBody);
    const id = randomUUID();
    const { orderId, created } = await this.db.tx(async (sql) => {
      await sql.one(`SELECT set_config('lock_timeout', $1, true)`, [`${this.config.env.IDEMPOTENCY_WAIT_MS}ms`]);
      let claimed: number;
      try {
        claimed = await sql.exec(
          `INSERT INTO idempotency_keys (key, request_hash, order_id) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
          [key, hash, id],
        );
      } catch (err) {
        if (pgCode(err) === PG.lockNotAvailable) {
          throw new AppError('IDEMPOTENCY_IN_PROGRESS', 'a request with this Idempotency-Key is still running; retry shortly');
        }
        throw err;
      }
      if (claimed === 0) {
        const first = (await sql.one<{ request_hash: string; order_id: string }>(
          `SELECT request_hash, order_id FROM idempotency_keys WHERE key = $1`,
          [key],
        ))!;
        if (first.request_hash !== hash) {
          throw new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with a different request body');
        }
        return { orderId: first.order_id, created: false };
      }
      await sql.one(`SELECT set_config('lock_timeout', '0', true)`);
      const transactionId = `tcc-${id}`;
      const newOrder = (lines: ReservedLine[]) => ({
        id,
        transactionId,
        customerId: body.customerId,
        amountMinor: lines.reduce((sum, l) => sum + l.priceMinor * l.quantity, 0),
        currency: lines[0].currency,
        ttlMs: this.config.env.RESERVATION_TTL_MS,
        paymentKey: `charge-${id}`,
        items: lines.map((l) => ({ sku: l.sku, quantity: l.quantity, unitPriceMinor: l.priceMinor })),
      });
      let written: ReservedLine[] = [];
      const { lines } = await this.inventory.try(sql, transactionId, body.items, async (priced) => {
        written = priced;
        await this.orders.insert(sql, newOrder(priced));
      });
      // A price changed between the unlocked read and the lock: the locked price is the one sold.
      if (lines.some((l, i) => l.priceMinor !== written[i]?.priceMinor || l.currency !== written[i]?.currency)) {
        await this.orders.reprice(sql, newOrder(lines));
      }
      return { orderId: id, created: true };
    });
    const order = await this.get(orderId);
    if (created) await this.afterCommit(() => this.scheduler.reservationCreated(order), order);
    return { order, created };
  }

  async get(id: string): Promise<OrderRow> {
    const order = isOrderId(id) ? await this.orders.find(this.db.sql, id) : undefined;
    if (!order) throw AppError.notFound(`order ${id}`);
    return order;
  }

  /** Cancel: release the stock (refunding a possible charge later). Idempotent on released orders. */
  async cancel(id: string, reason: string, data: Record<string, unknown> = {}, note?: MoveNote): Promise<OrderRow> {
    const current = await this.get(id);
    if (current.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed; it cannot be canceled`);
    if (current.status === 'CANCELED' || current.status === 'PAY_FAILED') return current;
    const { order, won } = await this.lifecycle.release(id, 'CANCELED', reason, data, 0, note);
    if (!won && order.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed; it cannot be canceled`);
    if (won && order.refund_status === 'PENDING') await this.afterCommit(() => this.scheduler.refundOwed(order), order);
    return order;
  }

  /** Scheduling after commit is best effort: the sweeper covers a lost call. */
  private async afterCommit(call: () => Promise<void>, order: OrderRow): Promise<void> {
    try {
      await call();
    } catch (err) {
      this.logger.warn({ orderId: order.id, err: (err as Error).message }, 'could not schedule a job; the sweeper will pick the order up');
    }
  }
}
