import { statement } from '../database/db.js';
import { ORDER_FIGURES } from '../orders/state/orders.sql.js';

/** The operator console's statements: its sessions and the figures at a glance. */
export const CONSOLE_SQL = {
  createSession: statement(
    'console_session_create',
    `INSERT INTO console_sessions (id_hash, csrf_token, expires_at, operator)
     VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000), $4)
     RETURNING csrf_token, tcc_iso(expires_at) AS expires_at`,
  ),

  /** A live session; an expired one is deleted on the way (the periodic purge gets the rest). */
  findSession: statement(
    'console_session_find',
    `WITH expired AS (DELETE FROM console_sessions WHERE id_hash = $1 AND expires_at <= now())
     SELECT csrf_token, tcc_iso(expires_at) AS expires_at, operator FROM console_sessions WHERE id_hash = $1 AND expires_at > now()`,
  ),

  endSession: statement('console_session_end', `DELETE FROM console_sessions WHERE id_hash = $1`),

  purgeExpired: statement('console_session_purge', `DELETE FROM console_sessions WHERE expires_at <= now()`),

  /** The figures /metrics reads too. */
  stats: statement('console_stats', `SELECT ${ORDER_FIGURES}`),
} as const;
