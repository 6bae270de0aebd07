import { statement } from '../../database/db.js';

/** Outside coordinators' branches: the row beside the barrier that carries items and deadline. */
export const PARTICIPANT_SQL = {
  reserved: statement(
    'participant_reserved',
    `INSERT INTO participant_branches (transaction_id, status, items, expires_at)
     VALUES ($1, 'RESERVED', $2::jsonb, now() + make_interval(secs => $3::float8 / 1000))
     RETURNING expires_at`,
  ),
  ended: statement(
    'participant_ended',
    `INSERT INTO participant_branches (transaction_id, status, expires_at) VALUES ($1, $2, now())
     ON CONFLICT (transaction_id) DO UPDATE SET status = $2, updated_at = now()`,
  ),
  /** Whether a reserved branch is past its deadline, read under its barrier's lock (a Confirm's last check). */
  expired: statement(
    'participant_expired',
    `SELECT 1 AS expired FROM participant_branches WHERE transaction_id = $1 AND status = 'RESERVED' AND expires_at <= now()`,
  ),
  /** Reserved branches past their deadline (unnamed: planned with the status so the partial index serves it). */
  due: `SELECT transaction_id FROM participant_branches WHERE status = $1 AND expires_at <= now() ORDER BY expires_at LIMIT $2`,
  list: `SELECT transaction_id, status, items, tcc_iso(created_at) AS created_at, tcc_iso(expires_at) AS expires_at, created_at::text AS cursor_at
           FROM participant_branches
          WHERE ($1::text IS NULL OR status = $1)
            AND ($2::float8 IS NULL OR created_at <= now() - make_interval(secs => $2 * 60))
            AND ($3::timestamptz IS NULL OR (created_at, transaction_id) > ($3::timestamptz, $4::text))
          ORDER BY created_at, transaction_id LIMIT $5`,
} as const;
