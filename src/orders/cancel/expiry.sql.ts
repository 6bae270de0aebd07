import { statement } from '../../database/db.js';

/** The reservation's deadline: the expiry's own lease, and extending it. State lists are parameters. */
export const EXPIRY_SQL = {
  /**
   * The expiry's own lease, taken under the order's lock before anything is decided: the order is
   * still holding, past its deadline and free of any other step (a Confirm's claim committed
   * meanwhile holds a lease; an Extend moved the deadline), judged on the row as it now stands, and
   * what its payment has come to read from that same row. The release or the gateway's word follows
   * under this lease.
   */
  claimExpiry: statement(
    'orders_claim_expiry',
    `UPDATE orders SET lease_until = now() + make_interval(secs => $2::float8 / 1000),
                       next_action_at = now() + make_interval(secs => $2::float8 / 1000)
      WHERE id = $1 AND status = ANY ($3::text[]) AND reservation_expires_at <= now()
        AND (lease_until IS NULL OR lease_until <= now())
      RETURNING payment_requested_at IS NOT NULL AS charge_requested, payment_status, lease_until::text AS lease`,
  ),

  /**
   * Extend: the new expiry is min(now + $2, created_at + $3 (RESERVATION_MAX_TTL_MS), the
   * authorization's expiry - $5 (AUTHORIZATION_MARGIN_MS) for a payment held at Try), never
   * earlier than today's, only while the order holds stock and has not expired. Answers the facts
   * the caller maps to the contract's codes, and the order as it now stands.
   */
  extend: statement(
    'orders_extend',
    `WITH cur AS (SELECT o.*, o.reservation_expires_at <= now() AS expired,
                         o.reservation_expires_at >= cap.at AS at_cap,
                         least(now() + make_interval(secs => $2::float8 / 1000), cap.at) AS target
                    FROM orders o
                    CROSS JOIN LATERAL (SELECT least(o.created_at + make_interval(secs => $3::float8 / 1000),
                                                     o.authorization_expires_at - make_interval(secs => $5::float8 / 1000)) AS at) cap
                   WHERE o.id = $1 FOR NO KEY UPDATE OF o),
     u AS (UPDATE orders o SET reservation_expires_at = cur.target, updated_at = tcc_order_stamp(o.updated_at)
             FROM cur WHERE o.id = cur.id AND cur.status = ANY ($4::text[]) AND NOT cur.expired AND cur.target > cur.reservation_expires_at
           RETURNING o.id, o.reservation_expires_at, tcc_order_json(o)::text AS body),
     ev AS (INSERT INTO order_events (order_id, type, data)
            SELECT u.id, 'reservation.extended', jsonb_build_object('from', tcc_iso(cur.reservation_expires_at), 'to', tcc_iso(u.reservation_expires_at))
              FROM u, cur)
     SELECT cur.status, cur.expired, cur.at_cap, u.id IS NOT NULL AS extended, u.reservation_expires_at AS expires_at,
            coalesce(u.body, tcc_order_json(o2)::text) AS body
       FROM cur JOIN orders o2 ON o2.id = cur.id LEFT JOIN u ON true`,
  ),
} as const;
