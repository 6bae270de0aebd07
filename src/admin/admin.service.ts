import { Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';
import { AppError } from '../common/errors.js';
import { Db } from '../database/db.js';
import { CheckoutService } from '../orders/checkout.service.js';
import { OrderLifecycle } from '../orders/order-lifecycle.js';
import { OrderStatus } from '../orders/order-state.js';
import { OrderEvent, OrderRow } from '../orders/order.types.js';
import { OrdersRepository } from '../orders/orders.repository.js';

interface Cursor {
  createdAt: string;
  id: string;
}

/**
 * Operator actions go through the same state machine, barrier and compare-and-set as automatic
 * runs: a force-cancel can never release stock twice, a force-confirm never revives a released
 * order. Every action is on the order's timeline with the operator's reason.
 */
@Injectable()
export class AdminService {
  private readonly cursorKey: Buffer;

  constructor(
    private readonly db: Db,
    private readonly orders: OrdersRepository,
    private readonly checkout: CheckoutService,
    private readonly lifecycle: OrderLifecycle,
    config: AppConfig,
  ) {
    this.cursorKey = createHmac('sha256', 'tcc-cursor').update(config.env.ADMIN_TOKEN ?? '').digest();
  }

  async forceConfirm(id: string, reason: string): Promise<OrderRow> {
    const current = await this.checkout.get(id);
    if (current.status === 'CONFIRM_SUCCESS') return current;
    if (current.status === 'CANCELED' || current.status === 'PAY_FAILED') {
      throw new AppError('ORDER_CANCELED', `order ${id} is ${current.status}: its stock was released`);
    }
    const { order } = await this.lifecycle.finishPaid(id, null, `force-confirmed by an operator: ${reason}`, { actor: 'operator', operatorReason: reason }, 0, {
      type: 'operator.force_confirm',
      data: { reason },
    });
    if (order.status !== 'CONFIRM_SUCCESS') throw new AppError('ORDER_CANCELED', `order ${id} is ${order.status}: its stock was released`);
    return order;
  }

  async forceCancel(id: string, reason: string): Promise<OrderRow> {
    const current = await this.checkout.get(id);
    if (current.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed; it cannot be canceled`);
    return this.checkout.cancel(id, `force-canceled by an operator: ${reason}`, { actor: 'operator', operatorReason: reason }, { type: 'operator.force_cancel', data: { reason } });
  }

  async events(id: string): Promise<OrderEvent[]> {
    await this.checkout.get(id);
    return this.orders.events(this.db.sql, id);
  }

  /** Oldest first, keyset-paginated on (created_at, id) with a signed cursor. */
  async list(status: OrderStatus | undefined, limit: number, cursor: string | undefined): Promise<{ data: OrderRow[]; nextCursor: string | null }> {
    const after = cursor ? this.decodeCursor(cursor) : undefined;
    // created_at travels as Postgres's own text form: microseconds survive the round trip.
    const ids = await this.db.sql.rows<{ id: string; created_at: string }>(
      `SELECT id, created_at::text AS created_at FROM orders
        WHERE ($1::text IS NULL OR status = $1)
          AND ($2::timestamptz IS NULL OR (created_at, id) > ($2::timestamptz, $3::uuid))
        ORDER BY created_at, id LIMIT $4`,
      [status ?? null, after?.createdAt ?? null, after?.id ?? null, limit + 1],
    );
    const page = ids.slice(0, limit);
    const data = (await Promise.all(page.map((r) => this.orders.find(this.db.sql, r.id)))).filter((o): o is OrderRow => !!o);
    const last = page[page.length - 1];
    const nextCursor = ids.length > limit && last ? this.encodeCursor({ createdAt: last.created_at, id: last.id }) : null;
    return { data, nextCursor };
  }

  private encodeCursor(c: Cursor): string {
    const payload = Buffer.from(JSON.stringify(c)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  private decodeCursor(raw: string): Cursor {
    const invalid = () => AppError.validation([{ field: 'cursor', message: 'cursor was not issued by this service' }]);
    const [payload, sig] = raw.split('.');
    if (!payload || !sig) throw invalid();
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    try {
      const c = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Cursor;
      if (typeof c.createdAt !== 'string' || typeof c.id !== 'string') throw invalid();
      return c;
    } catch {
      throw invalid();
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.cursorKey).update(payload).digest('base64url');
  }
}
