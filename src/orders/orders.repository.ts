import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/db.js';
import { OrderStatus, sourcesOf } from './order-state.js';
import { OrderEvent, OrderItem, OrderRow } from './order.types.js';

const SELECT_ORDER = `
  SELECT o.*, (o.reservation_expires_at <= now()) AS expired, coalesce((SELECT json_agg(json_build_object('sku', i.sku, 'quantity', i.quantity,
                                 'unitPriceMinor', i.unit_price_minor) ORDER BY i.sku)
                          FROM order_items i WHERE i.order_id = o.id), '[]'::json) AS items
    FROM orders o`;

/** Columns a transition may set besides status. Values are parameters, never SQL text. */
export interface TransitionPatch {
  paymentId?: string;
  failureReason?: string | null;
  /** Adds to confirm_attempts (an unknown outcome counts; a breaker rejection does not). */
  addAttempts?: number;
  /** Milliseconds from now (database clock) to the next retry or lookup; null clears it. */
  nextActionInMs?: number | null;
  forceConfirmed?: boolean;
  /** The order may have been charged: a refund check is owed until this many ms from now. */
  refundOwedForMs?: number;
}

export interface NewOrder {
  id: string;
  transactionId: string;
  customerId: string;
  amountMinor: number;
  currency: string;
  ttlMs: number;
  paymentKey: string;
  items: OrderItem[];
}

@Injectable()
export class OrdersRepository {
  /** Writes a new order, its lines and its first timeline event: one statement, one round trip. */
  async insert(sql: Sql, order: NewOrder): Promise<void> {
    await sql.exec(
      `WITH o AS (
         INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key)
         VALUES ($1, $2, $3, 'TRY_SUCCESS', $4, $5, now() + make_interval(secs => $6::double precision / 1000), $7)
       ), i AS (
         INSERT INTO order_items (order_id, sku, quantity, unit_price_minor)
         SELECT $1, sku, quantity, price FROM unnest($8::text[], $9::int[], $10::bigint[]) AS l(sku, quantity, price)
       )
       INSERT INTO order_events (order_id, type, data) VALUES ($1, 'status.changed', $11::jsonb)`,
      [
        order.id,
        order.transactionId,
        order.customerId,
        order.amountMinor,
        order.currency,
        order.ttlMs,
        order.paymentKey,
        order.items.map((i) => i.sku),
        order.items.map((i) => i.quantity),
        order.items.map((i) => i.unitPriceMinor),
        JSON.stringify({ from: null, to: 'TRY_SUCCESS', reason: 'stock reserved' }),
      ],
    );
  }

  /** Rewrites a new order's prices (inside its Try transaction, when a price moved meanwhile). */
  async reprice(sql: Sql, order: NewOrder): Promise<void> {
    await sql.exec(`UPDATE orders SET amount_minor = $2, currency = $3 WHERE id = $1`, [order.id, order.amountMinor, order.currency]);
    await sql.exec(
      `UPDATE order_items i SET unit_price_minor = l.price FROM unnest($2::text[], $3::bigint[]) AS l(sku, price)
        WHERE i.order_id = $1 AND i.sku = l.sku`,
      [order.id, order.items.map((i) => i.sku), order.items.map((i) => i.unitPriceMinor)],
    );
  }

  async find(sql: Sql, id: string): Promise<OrderRow | undefined> {
    return sql.one<OrderRow>(`${SELECT_ORDER} WHERE o.id = $1`, [id]);
  }

  /**
   * The only writer of `status`: a compare-and-set from the states the machine allows (narrowed
   * by `from` if given), with its timeline event in the same transaction. Returns the updated
   * order, or undefined when the order was not in one of those states (someone else won).
   */
  async transition(
    sql: Sql,
    id: string,
    to: OrderStatus,
    reason: string,
    opts: { from?: readonly OrderStatus[]; patch?: TransitionPatch; data?: Record<string, unknown> } = {},
  ): Promise<OrderRow | undefined> {
    const allowed = sourcesOf(to).filter((s) => !opts.from || opts.from.includes(s));
    const p = opts.patch ?? {};
    const row = await sql.one<{ previous: OrderStatus }>(
      `WITH previous AS (SELECT status FROM orders WHERE id = $1 FOR UPDATE)
       UPDATE orders o SET
              status = $2,
              payment_id = coalesce($4, o.payment_id),
              failure_reason = CASE WHEN $5::boolean THEN $6 ELSE o.failure_reason END,
              confirm_attempts = o.confirm_attempts + $7,
              next_action_at = CASE WHEN $8::boolean THEN now() + make_interval(secs => $9::double precision / 1000) ELSE NULL END,
              force_confirmed = o.force_confirmed OR $10,
              refund_status = CASE WHEN $11::double precision IS NOT NULL AND o.payment_requested_at IS NOT NULL
                                   THEN 'PENDING' ELSE o.refund_status END,
              refund_check_until = CASE WHEN $11::double precision IS NOT NULL AND o.payment_requested_at IS NOT NULL
                                   THEN now() + make_interval(secs => $11::double precision / 1000) ELSE o.refund_check_until END,
              refund_next_at = CASE WHEN $11::double precision IS NOT NULL AND o.payment_requested_at IS NOT NULL
                                   THEN now() ELSE o.refund_next_at END,
              updated_at = now()
         FROM previous
        WHERE o.id = $1 AND o.status = ANY($3::text[])
        RETURNING previous.status AS previous`,
      [
        id,
        to,
        allowed,
        p.paymentId ?? null,
        p.failureReason !== undefined,
        p.failureReason ?? null,
        p.addAttempts ?? 0,
        p.nextActionInMs !== undefined && p.nextActionInMs !== null,
        p.nextActionInMs ?? 0,
        p.forceConfirmed ?? false,
        p.refundOwedForMs ?? null,
      ],
    );
    if (!row) return undefined;
    // CONFIRM_PENDING -> CONFIRM_PENDING only reschedules; the caller records why (a retry, a lookup).
    if (row.previous !== to) await this.addEvent(sql, id, 'status.changed', { from: row.previous, to, reason, ...(opts.data ?? {}) });
    return this.find(sql, id);
  }

  /**
   * Takes a due step of a holding order for `leaseMs` — a retry or lookup of a CONFIRM_PENDING
   * order, or a Confirm whose process died mid-call — : exactly one caller gets the row; the
   * others find next_action_at in the future.
   */
  async claimDueStep(sql: Sql, id: string, leaseMs: number): Promise<OrderRow | undefined> {
    const claimed = await sql.exec(
      `UPDATE orders SET next_action_at = now() + make_interval(secs => $2::double precision / 1000)
        WHERE id = $1 AND status IN ('TRY_SUCCESS', 'CONFIRM_PENDING') AND next_action_at <= now()`,
      [id, leaseMs],
    );
    return claimed === 1 ? this.find(sql, id) : undefined;
  }

  /**
   * Before a charge call: notes that the order may be charged from now on, and leases the step
   * (next_action_at), so if this process dies mid-call the sweeper resumes the Confirm with the
   * same key. Refused (undefined) once the reservation has expired: the TTL is a hard deadline,
   * judged by the database's clock.
   */
  async markChargeRequested(sql: Sql, id: string, paymentToken: string | null, leaseMs: number): Promise<OrderRow | undefined> {
    const marked = await sql.exec(
      `UPDATE orders SET payment_requested_at = coalesce(payment_requested_at, now()),
                         payment_token = coalesce($2, payment_token),
                         next_action_at = now() + make_interval(secs => $3::double precision / 1000),
                         updated_at = now()
        WHERE id = $1 AND status IN ('TRY_SUCCESS', 'CONFIRM_PENDING') AND reservation_expires_at > now()`,
      [id, paymentToken, leaseMs],
    );
    return marked === 1 ? this.find(sql, id) : undefined;
  }

  /** A charge may exist on an order that no longer holds stock: keep checking and refund it. */
  async owesRefund(sql: Sql, id: string, watchMs: number, reason: string): Promise<void> {
    await sql.exec(
      `UPDATE orders SET refund_status = 'PENDING', refund_next_at = now(),
              refund_check_until = greatest(coalesce(refund_check_until, now()), now() + make_interval(secs => $2::double precision / 1000)),
              updated_at = now()
        WHERE id = $1`,
      [id, watchMs],
    );
    await this.addEvent(sql, id, 'refund.owed', { reason });
  }

  async addEvent(sql: Sql, orderId: string, type: string, data: Record<string, unknown> = {}): Promise<void> {
    await sql.exec(`INSERT INTO order_events (order_id, type, data) VALUES ($1, $2, $3::jsonb)`, [orderId, type, JSON.stringify(data)]);
  }

  async events(sql: Sql, orderId: string): Promise<OrderEvent[]> {
    const rows = await sql.rows<{ type: string; at: Date; data: Record<string, unknown> }>(
      `SELECT type, at, data FROM order_events WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
    return rows.map((r) => ({ type: r.type, at: new Date(r.at).toISOString(), data: r.data }));
  }
}
