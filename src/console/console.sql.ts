import { statement } from '../database/db.js';
import { ORDER_FIGURES } from '../orders/state/orders.sql.js';

/** The operator console's statements: its sessions and the figures at a glance. */
export const CONSOLE_SQL = {
  createSession: statement(
    'console_session_create',
    `INSERT INTO console_sessions (id_hash, csrf_token, expires_at, operator, token_tag, operator_id)
     VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000), $4, $5, $6::uuid)
     RETURNING csrf_token, tcc_iso(expires_at) AS expires_at`,
  ),

  /**
   * An operator's console session ($6), opened only while the password hash a sign-in checked ($7)
   * and the role it read ($8) are still theirs and they are not disabled; their last sign-in
   * recorded by the same statement. The UPDATE locks the operator's row: a password or role change
   * that holds it is waited for and then re-checked (the new hash or role opens nothing), and a
   * change that takes the row after it deletes the console sessions it finds, this one included, in
   * a statement after its UPDATE. No row: the sign-in lost that race.
   */
  openOperatorSession: statement(
    'console_session_open_operator',
    `WITH signed AS (
       UPDATE operators o SET last_sign_in_at = now()
        WHERE o.id = $6::uuid AND o.password_hash = $7 AND o.role = $8 AND o.disabled_at IS NULL
        RETURNING o.id)
     INSERT INTO console_sessions (id_hash, csrf_token, expires_at, operator, token_tag, operator_id)
     SELECT $1, $2, now() + make_interval(secs => $3::float8 / 1000), $4, $5, s.id FROM signed s
     RETURNING csrf_token, tcc_iso(expires_at) AS expires_at`,
  ),

  /**
   * A live session: one opened with today's admin token ($2, its tag; null when no token is set), or
   * one of an operator who is not disabled (with their name and role as they are now). An expired
   * one, or one opened with another token, is deleted on the way (the periodic purge gets the rest
   * of the expired; an operator's sessions are deleted when they are disabled or their role or
   * password changes).
   */
  findSession: statement(
    'console_session_find',
    `WITH dead AS (DELETE FROM console_sessions WHERE id_hash = $1 AND (expires_at <= now() OR (operator_id IS NULL AND token_tag IS DISTINCT FROM $2)))
     SELECT s.csrf_token, tcc_iso(s.expires_at) AS expires_at, s.operator, s.operator_id::text AS operator_id, o.name AS operator_name, o.role
       FROM console_sessions s LEFT JOIN operators o ON o.id = s.operator_id
      WHERE s.id_hash = $1 AND s.expires_at > now()
        AND CASE WHEN s.operator_id IS NULL THEN s.token_tag = $2 ELSE o.disabled_at IS NULL END`,
  ),

  endSession: statement('console_session_end', `DELETE FROM console_sessions WHERE id_hash = $1`),

  purgeExpired: statement('console_session_purge', `DELETE FROM console_sessions WHERE expires_at <= now()`),

  /** The figures /metrics reads too. */
  stats: statement('console_stats', `SELECT ${ORDER_FIGURES}`),
} as const;
