import { statement } from '../database/db.js';

/**
 * Retention's statements. Each deletes at most one batch in its own short transaction, and each
 * finds its rows through an index range that starts at the oldest row (EXPLAIN-checked in
 * test/retention.e2e-spec.ts): the age of a row is always compared with the database's clock.
 */
export const RETENTION_SQL = {
  /**
   * One page of orders created before the cutoff ($1 days), in orders_created order after the
   * cursor ($2, $3), at most $4 of them; of those, the finished ones ($5 states) not changed since
   * the cutoff, not needing attention and with no refund open (none, or $6 done) are deleted with
   * their timeline and their barrier rows. The page is what bounds the work, not what is deleted:
   * orders that must stay (a refund still open, an order needing attention) are stepped over once
   * per run, never read again and again. An order changed since the page was read is judged again
   * as it is now (FOR UPDATE re-checks it), and one another transaction holds is left for the next
   * run (SKIP LOCKED): retention never waits on the hot path.
   *
   * Webhook deliveries are not touched here: every delivery of an order is written in the
   * transaction of one of its changes, so it is never younger than the order's updated_at, and
   * the deliveries pass removes it once it is finished.
   */
  orders: statement(
    'retention_orders',
    `WITH page AS (
       SELECT id, created_at FROM orders
        WHERE created_at < now() - make_interval(days => $1::int) AND (created_at, id) > ($2::timestamptz, $3::uuid)
        ORDER BY created_at, id LIMIT $4),
     doomed AS (
       SELECT o.id, o.transaction_id FROM orders o JOIN page p ON p.id = o.id
        WHERE o.status = ANY ($5::text[]) AND o.updated_at < now() - make_interval(days => $1::int)
          AND NOT o.needs_attention AND (o.refund_status IS NULL OR o.refund_status = $6)
        FOR UPDATE OF o SKIP LOCKED),
     events AS (DELETE FROM order_events WHERE order_id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING 1),
     barrier AS (DELETE FROM tcc_barrier WHERE transaction_id = ANY (ARRAY(SELECT transaction_id FROM doomed)) RETURNING 1),
     gone AS (DELETE FROM orders WHERE id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING 1),
     last AS (SELECT p.created_at::text AS created_at_text, p.id FROM page p ORDER BY p.created_at DESC, p.id DESC LIMIT 1)
     SELECT (SELECT count(*) FROM page)::int AS scanned,
            (SELECT count(*) FROM gone)::int AS orders,
            (SELECT count(*) FROM events)::int AS events,
            (SELECT count(*) FROM barrier)::int AS barrier_rows,
            (SELECT created_at_text FROM last) AS last_created_at,
            (SELECT id FROM last) AS last_id`,
  ),

  /**
   * Up to $2 outside coordinators' branches finished (a 'confirm' or 'cancel' barrier row) before
   * the cutoff ($1 days), with all their barrier rows, their reservations and their
   * participant_branches row (else a Try of that id would find the row and fail). A branch still
   * reserved has neither row, so it is never found here. The op list and the 'ext:' prefix are
   * written out because they are the predicate of tcc_barrier_ext_finished, which this statement's
   * generic plan must be able to prove.
   */
  branches: statement(
    'retention_branches',
    `WITH done AS (
       SELECT transaction_id FROM tcc_barrier
        WHERE op IN ('confirm', 'cancel') AND transaction_id LIKE 'ext:%'
          AND created_at < now() - make_interval(days => $1::int)
        ORDER BY created_at LIMIT $2),
     held AS (DELETE FROM reservations WHERE transaction_id = ANY (ARRAY(SELECT transaction_id FROM done)) RETURNING 1),
     barrier AS (DELETE FROM tcc_barrier WHERE transaction_id = ANY (ARRAY(SELECT transaction_id FROM done)) RETURNING 1),
     branch AS (DELETE FROM participant_branches WHERE transaction_id = ANY (ARRAY(SELECT transaction_id FROM done)) RETURNING 1)
     SELECT (SELECT count(*) FROM done)::int AS branches,
            (SELECT count(*) FROM branch)::int AS branch_rows,
            (SELECT count(*) FROM barrier)::int AS barrier_rows,
            (SELECT count(*) FROM held)::int AS reservations`,
  ),

  /**
   * Up to $3 webhook deliveries in a finished state ($1) created before the cutoff ($2 days): one
   * range of webhook_deliveries_by_status per endpoint and state, then one primary-key probe per
   * (endpoint, event id) pair. Every condition is checked again on the row deleted: a pair that
   * was not picked is deleted only if it is as old and finished as the rest, and a delivery an
   * operator has just sent again (pending once more) stays.
   */
  deliveries: statement(
    'retention_deliveries',
    `WITH doomed AS (
       SELECT x.webhook_name, x.id
         FROM webhooks w CROSS JOIN unnest($1::text[]) AS s(status)
        CROSS JOIN LATERAL (
          SELECT d.webhook_name, d.id FROM webhook_deliveries d
           WHERE d.webhook_name = w.name AND d.status = s.status AND d.created_at < now() - make_interval(days => $2::int)
           ORDER BY d.created_at, d.id LIMIT $3) x
        LIMIT $3)
     DELETE FROM webhook_deliveries
      WHERE webhook_name = ANY (ARRAY(SELECT DISTINCT webhook_name FROM doomed)) AND id = ANY (ARRAY(SELECT id FROM doomed))
        AND status = ANY ($1::text[]) AND created_at < now() - make_interval(days => $2::int)`,
  ),

  /**
   * Up to $2 audit entries older than the cutoff ($1 days): of the $2 oldest by id (the log only
   * grows, so its ids follow its times), those written before the cutoff. A run stops at the first
   * batch with fewer: what follows is newer. Who did what is kept as long as everything else.
   */
  audit: statement(
    'retention_audit',
    `DELETE FROM audit_log
      WHERE id = ANY (ARRAY(SELECT o.id FROM (SELECT id, at FROM audit_log ORDER BY id LIMIT $2) o WHERE o.at < now() - make_interval(days => $1::int)))`,
  ),
} as const;
