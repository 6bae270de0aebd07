import { statement } from '../database/db.js';

/** The operator console's statements: its sessions and the figures at a glance. */
export const CONSOLE_SQL = {
  createSession: statement(
    'console_session_create',
    `INSERT INTO console_sessions (id_hash, csrf_token, expires_at)
     VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000))
     RETURNING csrf_token, tcc_iso(expires_at) AS expires_at`,
  ),

  /** A live session; an expired one is deleted on the way (the periodic purge gets the rest). */
  findSession: statement(
    'console_session_find',
    `WITH expired AS (DELETE FROM console_sessions WHERE id_hash = $1 AND expires_at <= now())
     SELECT csrf_token, tcc_iso(expires_at) AS expires_at FROM console_sessions WHERE id_hash = $1 AND expires_at > now()`,
  ),

  endSession: statement('console_session_end', `DELETE FROM console_sessions WHERE id_hash = $1`),

  purgeExpired: statement('console_session_purge', `DELETE FROM console_sessions WHERE expires_at <= now()`),

  /** Read as /metrics reads them (src/ops/metrics.sql.ts): order_counts plus the deltas, never a count over orders. */
  stats: statement(
    'console_stats',
    `SELECT (SELECT coalesce(json_object_agg(status, n), '{}') FROM (SELECT status, sum(n)::bigint AS n FROM (SELECT status, n FROM order_counts UNION ALL SELECT status, delta FROM order_count_deltas) x GROUP BY status) c) AS by_status,
            (SELECT count(*) FROM orders WHERE needs_attention) AS needing_attention`,
  ),
} as const;
