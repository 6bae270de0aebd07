import { statement } from '../database/db.js';

const KEY_COLUMNS = `k.id::text AS id, k.name, k.scopes, k.prefix, tcc_iso(k.created_at) AS created_at, tcc_iso(k.expires_at) AS expires_at,
  tcc_iso(k.last_used_at) AS last_used_at, tcc_iso(k.revoked_at) AS revoked_at, k.created_at::text AS created_at_key`;

const OPERATOR_COLUMNS = `o.id::text AS id, o.email, o.name, o.role, tcc_iso(o.created_at) AS created_at, tcc_iso(o.disabled_at) AS disabled_at,
  tcc_iso(o.last_sign_in_at) AS last_sign_in_at, o.created_at::text AS created_at_key`;

/** Identity and access: API keys, operators, the audit log. */
export const ACCESS_SQL = {
  createKey: statement(
    'api_key_create',
    `INSERT INTO api_keys AS k (name, scopes, prefix, key_hash, expires_at, created_by_type, created_by_id, created_by_name)
     VALUES ($1, $2::text[], $3, $4, $5::timestamptz, $6, $7, $8)
     RETURNING ${KEY_COLUMNS}`,
  ),

  /** The key whose hash this is, live or not (the caller judges revocation and expiry, so a cached answer can too). */
  keyByHash: statement(
    'api_key_by_hash',
    `SELECT k.id::text AS id, k.name, k.scopes, k.key_hash, k.expires_at, k.revoked_at IS NOT NULL AS revoked FROM api_keys k WHERE k.key_hash = $1`,
  ),

  getKey: statement('api_key_get', `SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = $1::uuid`),

  listKeys: statement(
    'api_key_list',
    `SELECT ${KEY_COLUMNS} FROM api_keys k
      WHERE ($1::timestamptz IS NULL OR (k.created_at, k.id) > ($1::timestamptz, $2::uuid))
      ORDER BY k.created_at, k.id LIMIT $3`,
  ),

  /** Revokes once: a second revocation keeps the first time. */
  revokeKey: statement(
    'api_key_revoke',
    `UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now()) WHERE k.id = $1::uuid RETURNING ${KEY_COLUMNS}`,
  ),

  /**
   * A live key's use at $2 (when it was used, not when this is written). A revoked key's is not
   * written: a write that lands after the revocation would change what revoking again answers.
   */
  touchKey: statement(
    'api_key_touch',
    `UPDATE api_keys SET last_used_at = $2::timestamptz
      WHERE id = $1::uuid AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at < $2::timestamptz)`,
  ),

  /** A new operator, or nothing when the email (any case) is taken: never a unique violation under a race. */
  createOperator: statement(
    'operator_create',
    `INSERT INTO operators AS o (email, name, role, password_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT ((lower(email))) DO NOTHING
     RETURNING ${OPERATOR_COLUMNS}`,
  ),

  getOperator: statement('operator_get', `SELECT ${OPERATOR_COLUMNS} FROM operators o WHERE o.id = $1::uuid`),

  listOperators: statement(
    'operator_list',
    `SELECT ${OPERATOR_COLUMNS} FROM operators o
      WHERE ($1::timestamptz IS NULL OR (o.created_at, o.id) > ($1::timestamptz, $2::uuid))
      ORDER BY o.created_at, o.id LIMIT $3`,
  ),

  /**
   * The operator's row, locked for a change (patchOperator next, in the same transaction): under
   * READ COMMITTED a row lock taken inside a statement does not refresh that statement's snapshot,
   * so what the change replaces is read here, where FOR UPDATE returns the row as the last
   * committed change left it — not in the UPDATE, whose snapshot may predate a change it waited for.
   */
  lockOperator: statement('operator_lock', `SELECT o.role, o.disabled_at IS NOT NULL AS disabled FROM operators o WHERE o.id = $1::uuid FOR UPDATE`),

  /**
   * A change to an operator ($2 name, $3 role, $4 password hash, $5 disabled: each null =
   * unchanged), locked by lockOperator, whose role and disabled are $6 and $7. `ends_sessions`: a
   * change of role or password, or a disabling, which ends the operator's console sessions — by
   * endSessions, a later statement of the same transaction, so that it also sees a session a
   * sign-in committed while the lock was awaited.
   */
  patchOperator: statement(
    'operator_patch',
    `UPDATE operators o SET
             name = coalesce($2, o.name),
             role = coalesce($3, o.role),
             password_hash = coalesce($4, o.password_hash),
             disabled_at = CASE WHEN $5::boolean IS NULL THEN o.disabled_at WHEN $5 THEN coalesce(o.disabled_at, now()) ELSE NULL END,
             updated_at = now()
      WHERE o.id = $1::uuid
      RETURNING ${OPERATOR_COLUMNS},
                ($4::text IS NOT NULL OR o.role <> $6::text OR (o.disabled_at IS NOT NULL AND NOT $7::boolean)) AS ends_sessions`,
  ),
  endSessions: statement('operator_end_sessions', `DELETE FROM console_sessions WHERE operator_id = $1::uuid`),

  /** The operator an email names, for a sign-in (any case). */
  operatorByEmail: statement(
    'operator_by_email',
    `SELECT o.id::text AS id, o.name, o.role, o.password_hash, o.disabled_at IS NOT NULL AS disabled FROM operators o WHERE lower(o.email) = lower($1)`,
  ),

  audit: statement(
    'audit_write',
    `INSERT INTO audit_log (principal_type, principal_id, principal_name, action, target, outcome, request_id, address, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)`,
  ),

  /** Newest first, keyset-paginated on id; both filters optional. */
  listAudit: statement(
    'audit_list',
    `SELECT a.id::text AS id, tcc_iso(a.at) AS at, a.principal_type, a.principal_id, a.principal_name, a.action, a.target, a.outcome,
            a.request_id, a.address
       FROM audit_log a
      WHERE ($1::text IS NULL OR a.principal_id = $1) AND ($2::text IS NULL OR a.action = $2) AND ($3::bigint IS NULL OR a.id < $3)
      ORDER BY a.id DESC LIMIT $4`,
  ),
} as const;
