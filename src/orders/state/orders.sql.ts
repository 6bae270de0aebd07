import { statement } from '../../database/db.js';

/**
 * The statements on an order's state: tcc_apply (apply-moves.sql), the only writer of
 * orders.status, for a batch of moves; the order as clients see it (tcc_order_json,
 * order-json.sql); the facts the coordinator decides on; what is due. State lists are
 * parameters, never retyped.
 */
export const ORDERS_SQL = {
  apply: statement('orders_apply', `SELECT * FROM tcc_apply($1::jsonb, $2::text[], $3::text)`),

  body: statement('orders_body', `SELECT o.status, tcc_order_json(o)::text AS body FROM orders o WHERE o.id = $1`),

  /** What the coordinator decides on, by the database's clock. */
  state: statement(
    'orders_state',
    `SELECT o.id, o.status, o.transaction_id, o.amount_minor, o.currency, o.payment_key, o.confirm_attempts,
            o.payment_requested_at IS NOT NULL AS charge_requested,
            o.reservation_expires_at <= now() AS expired,
            coalesce(o.lease_until > now(), false) AS leased,
            coalesce(o.next_action_at <= now(), false) AS due,
            o.force_confirmed, o.refund_status, o.refund_failures, o.needs_attention, o.payment_status,
            tcc_order_json(o)::text AS body
       FROM orders o WHERE o.id = $1`,
  ),

  /**
   * Holding orders with something due, by the database's clock: the TTL passed or the next retry,
   * lookup or resumption came — and no step is running on them. `$1` ms of grace lets the
   * jobs go first when the sweeper asks. Served by orders_holding_due, an index on exactly
   * least(reservation_expires_at, next_action_at) over holding orders; unnamed (a plain string), so
   * it is planned with the actual state list and Postgres can match the index's predicate.
   * `expired_unpaid`: past its TTL with nothing to ask the gateway (never charged; a payment held
   * at Try whose capture was not asked for, $4 the states that were); `authorizing`: its
   * authorization is unsettled ($5), its next step is that authorization's.
   */
  due: `SELECT id, reservation_expires_at <= now() AND (payment_requested_at IS NULL OR payment_status <> ALL ($4::text[])) AS expired_unpaid,
              coalesce(payment_status = ANY ($5::text[]), false) AS authorizing
       FROM orders
      WHERE status = ANY ($3::text[])
        AND least(reservation_expires_at, next_action_at) <= now() - make_interval(secs => $1::float8 / 1000)
        AND (lease_until IS NULL OR lease_until <= now())
      ORDER BY least(reservation_expires_at, next_action_at)
      LIMIT $2`,

  /** The earliest due time in a bucket that is not due yet (the database clock runs behind ours). */
  nextDueBefore: `SELECT extract(epoch FROM min(least(reservation_expires_at, next_action_at)) - now()) * 1000 AS in_ms
       FROM orders
      WHERE status = ANY ($2::text[])
        AND least(reservation_expires_at, next_action_at) > now() AND least(reservation_expires_at, next_action_at) <= $1`,

  events: statement('orders_events', `SELECT type, at, data FROM order_events WHERE order_id = $1 ORDER BY id`),

  /** tcc_flag_attention (flag-attention.sql): a human must look at the order, flagged once per episode. */
  flagAttention: statement('orders_flag_attention', `SELECT tcc_flag_attention($1::uuid, $2, $3::jsonb) AS flagged`),
} as const;

/**
 * Select-list items for the figures at a glance (/metrics, the console): orders by status — the
 * counts plus the deltas the triggers append (tcc_count_changes, count-changes.sql), never a count
 * over orders — and how many need a human.
 */
export const ORDER_FIGURES = `(SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT status, sum(n)::bigint AS n FROM (SELECT status, n FROM order_counts UNION ALL SELECT status, delta FROM order_count_deltas) x GROUP BY status) c) AS by_status,
       (SELECT count(*) FROM orders WHERE needs_attention) AS needing_attention`;
