import { statement } from '../database/db.js';

/**
 * The filters besides status, as parameters $n to $n+5: needsAttention, olderThanMinutes,
 * customerId, sku, and the start of an id as the range of ids it spans (lowest, highest), so the
 * primary key serves it.
 */
function filters(n: number): string {
  const [attention, older, customer, sku, idFrom, idTo] = [n, n + 1, n + 2, n + 3, n + 4, n + 5].map((i) => `$${i}`);
  return `(${attention}::boolean IS NULL OR o.needs_attention = ${attention})
        AND (${older}::float8 IS NULL OR o.created_at <= now() - make_interval(secs => ${older} * 60))
        AND (${customer}::text IS NULL OR o.customer_id = ${customer})
        AND (${sku}::text IS NULL OR EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.sku = ${sku}))
        AND (${idFrom}::uuid IS NULL OR o.id BETWEEN ${idFrom}::uuid AND ${idTo}::uuid)`;
}

/**
 * What a CONFIRM_PENDING order ($n) last met at the gateway: its newest payment call on the
 * timeline (order_events_by_order, newest first; a handful of events per order).
 */
function lastCall(n: number): string {
  return `LEFT JOIN LATERAL (
          SELECT e.type AS last_type, e.at AS last_at, e.data AS last_data FROM order_events e
           WHERE o.status = $${n} AND e.order_id = o.id AND e.type IN ('payment.charge', 'payment.lookup', 'payment.breaker_rejected')
           ORDER BY e.id DESC LIMIT 1) w ON true`;
}

const VIEW_COLUMNS = `tcc_order_json(o)::text AS body, tcc_iso(o.next_action_at) AS next_action_at, o.refund_status, o.needs_attention,
            w.last_type, w.last_at, w.last_data`;

function listStatement(after: '>' | '<', direction: 'ASC' | 'DESC'): string {
  return `SELECT o.id, o.created_at::text AS created_at, ${VIEW_COLUMNS}
       FROM orders o
       ${lastCall(11)}
      WHERE ($1::text IS NULL OR o.status = $1)
        AND ${filters(2)}
        AND ($8::timestamptz IS NULL OR (o.created_at, o.id) ${after} ($8::timestamptz, $9::uuid))
      ORDER BY o.created_at ${direction}, o.id ${direction}
      LIMIT $10`;
}

/** The operator API's statements. */
export const ADMIN_SQL = {
  /** Oldest first, keyset-paginated on (created_at, id); every filter optional and combinable. */
  list: statement('admin_list', listStatement('>', 'ASC')),

  /** The same, newest first. */
  listNewest: statement('admin_list_newest', listStatement('<', 'DESC')),

  /** How many orders match, in all and per status (each status count ignores the status filter). */
  counts: statement(
    'admin_counts',
    `SELECT o.status, count(*)::int AS n
       FROM orders o
      WHERE ${filters(1)}
      GROUP BY o.status`,
  ),

  /** Holding orders a bulk cancel matches (at most $5). */
  holding: statement(
    'admin_holding',
    `SELECT o.id FROM orders o
      WHERE o.status = ANY ($1::text[])
        AND ($2::float8 IS NULL OR o.created_at <= now() - make_interval(secs => $2 * 60))
        AND ($3::text IS NULL OR o.customer_id = $3)
        AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.sku = $4))
      ORDER BY o.created_at, o.id
      LIMIT $5`,
  ),

  adminView: statement(
    'admin_view',
    `SELECT o.id, o.status, ${VIEW_COLUMNS}
       FROM orders o ${lastCall(2)} WHERE o.id = $1`,
  ),

  /** Retry now: the next step of a CONFIRM_PENDING order is due at once (unless one is running). */
  retryNow: statement(
    'admin_retry_now',
    `WITH u AS (UPDATE orders SET next_action_at = now()
                 WHERE id = $1 AND status = $2 AND (lease_until IS NULL OR lease_until <= now()) RETURNING id)
     INSERT INTO order_events (order_id, type, data) SELECT id, 'operator.retry_now', jsonb_strip_nulls(jsonb_build_object('operator', $3::text)) || jsonb_build_object('principal', $4::jsonb) FROM u`,
  ),

  /**
   * Force-confirm of an order whose payment was held at Try: it is captured like Confirm, now —
   * its next step (a capture retry, the authorization's next attempt) is due at once unless one
   * is running — with the operator's action on the timeline.
   */
  forceCapture: statement(
    'admin_force_capture',
    `WITH u AS (UPDATE orders SET next_action_at = CASE WHEN lease_until IS NULL OR lease_until <= now() THEN least(next_action_at, now()) ELSE next_action_at END
                 WHERE id = $1 AND status = ANY ($2::text[]) AND payment_status IS NOT NULL RETURNING id)
     INSERT INTO order_events (order_id, type, data)
     SELECT id, 'operator.force_confirm', jsonb_strip_nulls(jsonb_build_object('reason', $3::text, 'operator', $4::text, 'capture', true)) || jsonb_build_object('principal', $5::jsonb) FROM u
     RETURNING order_id`,
  ),

  /**
   * An operator has looked: the flag drops, and a refund that was failing is watched afresh (if it
   * keeps failing for another REFUND_ALERT_AFTER_MS, the order needs attention again).
   */
  acknowledge: statement(
    'admin_acknowledge',
    `WITH u AS (UPDATE orders SET needs_attention = false, attention_reason = NULL, updated_at = tcc_order_stamp(updated_at),
                              refund_status = CASE WHEN refund_status = $3 THEN $4 ELSE refund_status END,
                              refund_owed_at = CASE WHEN refund_status = $3 THEN now() ELSE refund_owed_at END
                 WHERE id = $1 AND needs_attention RETURNING id)
     INSERT INTO order_events (order_id, type, data) SELECT id, 'operator.acknowledge', jsonb_strip_nulls(jsonb_build_object('reason', $2::text, 'operator', $5::text)) || jsonb_build_object('principal', $6::jsonb) FROM u`,
  ),
} as const;
