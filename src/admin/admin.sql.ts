import { statement } from '../database/db.js';

/** The filters besides status, as parameters $n to $n+3: needsAttention, olderThanMinutes, customerId, sku. */
function filters(n: number): string {
  const [attention, older, customer, sku] = [n, n + 1, n + 2, n + 3].map((i) => `$${i}`);
  return `(${attention}::boolean IS NULL OR o.needs_attention = ${attention})
        AND (${older}::float8 IS NULL OR o.created_at <= now() - make_interval(secs => ${older} * 60))
        AND (${customer}::text IS NULL OR o.customer_id = ${customer})
        AND (${sku}::text IS NULL OR EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.sku = ${sku}))`;
}

function listStatement(after: '>' | '<', direction: 'ASC' | 'DESC'): string {
  return `SELECT o.id, o.created_at::text AS created_at, tcc_order_json(o)::text AS body,
            tcc_iso(o.next_action_at) AS next_action_at, o.refund_status, o.needs_attention
       FROM orders o
      WHERE ($1::text IS NULL OR o.status = $1)
        AND ${filters(2)}
        AND ($6::timestamptz IS NULL OR (o.created_at, o.id) ${after} ($6::timestamptz, $7::uuid))
      ORDER BY o.created_at ${direction}, o.id ${direction}
      LIMIT $8`;
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

  /** Holding orders a bulk cancel matches (at most $6). */
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
    `SELECT o.id, o.status, tcc_order_json(o)::text AS body, tcc_iso(o.next_action_at) AS next_action_at, o.refund_status, o.needs_attention
       FROM orders o WHERE o.id = $1`,
  ),

  /** Retry now: the next step of a CONFIRM_PENDING order is due at once (unless one is running). */
  retryNow: statement(
    'admin_retry_now',
    `WITH u AS (UPDATE orders SET next_action_at = now()
                 WHERE id = $1 AND status = $2 AND (lease_until IS NULL OR lease_until <= now()) RETURNING id)
     INSERT INTO order_events (order_id, type, data) SELECT id, 'operator.retry_now', jsonb_strip_nulls(jsonb_build_object('operator', $3::text)) FROM u`,
  ),

  /**
   * An operator has looked: the flag drops, and a refund that was failing is watched afresh (if it
   * keeps failing for another REFUND_ALERT_AFTER_MS, the order needs attention again).
   */
  acknowledge: statement(
    'admin_acknowledge',
    `WITH u AS (UPDATE orders SET needs_attention = false, attention_reason = NULL, updated_at = now(),
                              refund_status = CASE WHEN refund_status = $3 THEN $4 ELSE refund_status END,
                              refund_owed_at = CASE WHEN refund_status = $3 THEN now() ELSE refund_owed_at END
                 WHERE id = $1 AND needs_attention RETURNING id)
     INSERT INTO order_events (order_id, type, data) SELECT id, 'operator.acknowledge', jsonb_strip_nulls(jsonb_build_object('reason', $2::text, 'operator', $5::text)) FROM u`,
  ),
} as const;
