import { statement } from '../database/db.js';

/**
 * Every statement of the orders module. The heavy lifting lives in SQL functions (migrations):
 * tcc_try_batch (Try for a batch), tcc_probe (its lock-free judgement alone), tcc_claim (one gateway attempt at a time), tcc_apply (the
 * only writer of orders.status, for a batch of moves). State lists are parameters, never retyped.
 */
export const ORDERS_SQL = {
  tryBatch: statement(
    'orders_try_batch',
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available
       FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::int[], $8::float8, $9::int, $10::text[], $11::boolean)`,
  ),

  /** The sold-out probe: tcc_try_batch's judgement on the last committed state, with no lock on any row. Lines name their order. */
  probe: statement(
    'orders_probe',
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[])`,
  ),

  claim: statement('orders_claim', `SELECT * FROM tcc_claim($1::uuid[], $2::text[], $3::boolean[], $4::float8, $5::text[])`),

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
            o.force_confirmed, o.refund_status, o.refund_failures, o.needs_attention,
            tcc_order_json(o)::text AS body
       FROM orders o WHERE o.id = $1`,
  ),

  /** The expiry's own lease: the gateway is asked with no other step running on the order. */
  claimExpiry: statement(
    'orders_claim_expiry',
    `UPDATE orders SET lease_until = now() + make_interval(secs => $2::float8 / 1000),
                       next_action_at = now() + make_interval(secs => $2::float8 / 1000)
      WHERE id = $1 AND status = ANY ($3::text[]) AND reservation_expires_at <= now()
        AND (lease_until IS NULL OR lease_until <= now())
      RETURNING payment_requested_at IS NOT NULL AS charge_requested, lease_until::text AS lease`,
  ),

  /**
   * Holding orders with something due, by the database's clock: the TTL passed or the next retry,
   * lookup or resumption came — and no step is running on them. `$1` ms of grace lets the
   * jobs go first when the sweeper asks. Served by orders_holding_due, an index on exactly
   * least(reservation_expires_at, next_action_at) over holding orders; unnamed (a plain string), so
   * it is planned with the actual state list and Postgres can match the index's predicate.
   */
  due: `SELECT id, reservation_expires_at <= now() AND payment_requested_at IS NULL AS expired_unpaid
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

  /**
   * Extend: the new expiry is min(now + $2, created_at + $3 (RESERVATION_MAX_TTL_MS)), never
   * earlier than today's, only while the order holds stock and has not expired. Answers the facts
   * the caller maps to the contract's codes, and the order as it now stands.
   */
  extend: statement(
    'orders_extend',
    `WITH cur AS (SELECT o.*, o.reservation_expires_at <= now() AS expired,
                         o.reservation_expires_at >= o.created_at + make_interval(secs => $3::float8 / 1000) AS at_cap,
                         least(now() + make_interval(secs => $2::float8 / 1000), o.created_at + make_interval(secs => $3::float8 / 1000)) AS target
                    FROM orders o WHERE o.id = $1 FOR NO KEY UPDATE),
     u AS (UPDATE orders o SET reservation_expires_at = cur.target, updated_at = now()
             FROM cur WHERE o.id = cur.id AND cur.status = ANY ($4::text[]) AND NOT cur.expired AND cur.target > cur.reservation_expires_at
           RETURNING o.id, o.reservation_expires_at, tcc_order_json(o)::text AS body),
     ev AS (INSERT INTO order_events (order_id, type, data)
            SELECT u.id, 'reservation.extended', jsonb_build_object('from', tcc_iso(cur.reservation_expires_at), 'to', tcc_iso(u.reservation_expires_at))
              FROM u, cur)
     SELECT cur.status, cur.expired, cur.at_cap, u.id IS NOT NULL AS extended, u.reservation_expires_at AS expires_at,
            coalesce(u.body, tcc_order_json(o2)::text) AS body
       FROM cur JOIN orders o2 ON o2.id = cur.id LEFT JOIN u ON true`,
  ),

  events: statement('orders_events', `SELECT type, at, data FROM order_events WHERE order_id = $1 ORDER BY id`),

  flagAttention: statement('orders_flag_attention', `SELECT tcc_flag_attention($1::uuid, $2, $3::jsonb) AS flagged`),
} as const;

/**
 * Select-list items for the figures at a glance (/metrics, the console): orders by status — the
 * counts plus the deltas the triggers append, never a count over orders — and how many need a human.
 */
export const ORDER_FIGURES = `(SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT status, sum(n)::bigint AS n FROM (SELECT status, n FROM order_counts UNION ALL SELECT status, delta FROM order_count_deltas) x GROUP BY status) c) AS by_status,
       (SELECT count(*) FROM orders WHERE needs_attention) AS needing_attention`;
