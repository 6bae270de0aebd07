import { statement } from '../database/db.js';

/** Statements of the safety nets: the sweeper, reconciliation and the job state they keep. */
export const RECOVERY_SQL = {
  /** Unnamed, like every query that must use a partial index on a state list it is given. */
  refundsDue: `SELECT id FROM orders
      WHERE refund_status = ANY ($3::text[]) AND refund_next_at <= now() - make_interval(secs => $1::float8 / 1000)
      ORDER BY refund_next_at LIMIT $2`,

  /**
   * A page of finished orders that were ever sent to the gateway, created in the window, after the
   * cursor: what reconciliation compares with the gateway's record.
   */
  sentPage: statement(
    'recovery_sent_page',
    `SELECT id, status, force_confirmed, refund_status, created_at::text AS created_at,
            coalesce(refund_check_until > now(), false) AS refund_watching, amount_minor, payment_status, payment_id
       FROM orders
      WHERE payment_requested_at IS NOT NULL AND status = ANY ($1::text[])
        AND created_at >= now() - make_interval(secs => $2::float8 / 1000)
        AND created_at <= now() - make_interval(secs => $6::float8 / 1000)
        AND ($3::timestamptz IS NULL OR (created_at, id) > ($3::timestamptz, $4::uuid))
        AND ($7::timestamptz IS NULL OR (created_at, id) < ($7::timestamptz, $8::uuid))
      ORDER BY created_at, id LIMIT $5`,
  ),

  /**
   * The scheduled pass's horizon: the first order after the cursor, within the settled part of the
   * window ($3, $4, $5 as sentPage's $3, $4, $6), sent to the gateway and not settled yet — still
   * holding, or still watched for a charge to refund. The pass stops before it, so its cursor never
   * passes an order that could still turn into something to check.
   */
  unsettledFirst: statement(
    'recovery_unsettled_first',
    `SELECT id, created_at::text AS created_at, status, coalesce(refund_check_until > now(), false) AS refund_watching
       FROM orders
      WHERE payment_requested_at IS NOT NULL AND (status <> ALL ($1::text[]) OR refund_check_until > now())
        AND created_at >= now() - make_interval(secs => $2::float8 / 1000)
        AND created_at <= now() - make_interval(secs => $5::float8 / 1000)
        AND ($3::timestamptz IS NULL OR (created_at, id) > ($3::timestamptz, $4::uuid))
      ORDER BY created_at, id LIMIT 1`,
  ),

  /** Folds the per-statement status deltas into the totals (one transaction: a scrape sees either). */
  compactCounts: statement(
    'recovery_compact_counts',
    `WITH d AS (DELETE FROM order_count_deltas RETURNING status, delta)
     INSERT INTO order_counts AS c (status, n) SELECT status, sum(delta) FROM d GROUP BY status
     ON CONFLICT (status) DO UPDATE SET n = c.n + EXCLUDED.n`,
  ),

  jobState: statement('recovery_job_state', `SELECT state FROM job_state WHERE name = $1`),
  saveJobState: statement(
    'recovery_save_job_state',
    `INSERT INTO job_state (name, state, updated_at) VALUES ($1, $2::jsonb, now())
     ON CONFLICT (name) DO UPDATE SET state = job_state.state || $2::jsonb, updated_at = now()`,
  ),
  dbNow: statement('recovery_db_now', `SELECT extract(epoch FROM now()) * 1000 AS now_ms`),
} as const;
