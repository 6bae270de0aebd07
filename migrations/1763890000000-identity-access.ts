import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Identity and access (API.md, "Identity and access"): API keys with scopes, operators (people,
 * with a role) and the audit log; console sessions may belong to an operator; every ledger movement
 * names its principal.
 *
 * - api_keys keeps a SHA-256 of each key (32 random bytes: a fast hash is right), never the key.
 * - operators keeps a slow salted hash of each password (scrypt), its email unique whatever its case.
 * - console_sessions.operator_id: a session opened by an operator's sign-in (null: the root token's).
 * - stock_movements' principal columns are filled by a trigger from what the writer passes as its
 *   actor (src/inventory/ledger/movement-principal.sql); a writer that passes a plain actor (a
 *   process from before this migration) still inserts, its principal derived from the actor.
 */
export class IdentityAccess1763890000000 implements MigrationInterface {
  name = 'IdentityAccess1763890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_keys (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name             text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        scopes           text[] NOT NULL CHECK (cardinality(scopes) BETWEEN 1 AND 8),
        prefix           text NOT NULL,
        key_hash         bytea NOT NULL CHECK (octet_length(key_hash) = 32),
        created_at       timestamptz NOT NULL DEFAULT now(),
        expires_at       timestamptz,
        last_used_at     timestamptz,
        revoked_at       timestamptz,
        created_by_type  text NOT NULL,
        created_by_id    text,
        created_by_name  text
      )`);
    await q.query(`CREATE UNIQUE INDEX api_keys_key_hash ON api_keys (key_hash)`);
    await q.query(`CREATE INDEX api_keys_by_created ON api_keys (created_at, id)`);

    await q.query(`
      CREATE TABLE operators (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email            text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
        name             text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        role             text NOT NULL CHECK (role IN ('viewer', 'operator', 'stock', 'admin')),
        password_hash    text NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        disabled_at      timestamptz,
        last_sign_in_at  timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX operators_email ON operators (lower(email))`);
    await q.query(`CREATE INDEX operators_by_created ON operators (created_at, id)`);

    // An operator's session ends with the operator (and is deleted when they are disabled, or their role or password changes).
    await q.query(`ALTER TABLE console_sessions ADD COLUMN operator_id uuid REFERENCES operators (id) ON DELETE CASCADE`);
    await q.query(`CREATE INDEX console_sessions_by_operator ON console_sessions (operator_id) WHERE operator_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE audit_log (
        id              bigserial PRIMARY KEY,
        at              timestamptz NOT NULL DEFAULT now(),
        principal_type  text CHECK (principal_type IN ('root', 'api_key', 'operator', 'system')),
        principal_id    text,
        principal_name  text,
        action          text NOT NULL,
        target          text,
        outcome         integer NOT NULL,
        request_id      text,
        address         text,
        detail          jsonb NOT NULL DEFAULT '{}'::jsonb
      )`);
    await q.query(`CREATE INDEX audit_log_by_principal ON audit_log (principal_id, id) WHERE principal_id IS NOT NULL`);
    await q.query(`CREATE INDEX audit_log_by_action ON audit_log (action, id)`);

    await q.query(`
      ALTER TABLE stock_movements
        ADD COLUMN principal_type text CHECK (principal_type IN ('root', 'api_key', 'operator', 'system')),
        ADD COLUMN principal_id text,
        ADD COLUMN principal_name text`);
    await q.query(`UPDATE stock_movements SET principal_type = CASE WHEN actor IN ('admin', 'console') THEN 'root' ELSE 'system' END`);
    await q.query(PRINCIPAL_TRIGGER_FUNCTION);
    await q.query(`CREATE TRIGGER stock_movements_principal BEFORE INSERT ON stock_movements FOR EACH ROW EXECUTE FUNCTION tcc_movement_principal()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS stock_movements_principal ON stock_movements`);
    await q.query(`DROP FUNCTION IF EXISTS tcc_movement_principal()`);
    await q.query(`ALTER TABLE stock_movements DROP COLUMN IF EXISTS principal_type, DROP COLUMN IF EXISTS principal_id, DROP COLUMN IF EXISTS principal_name`);
    await q.query(`DROP TABLE IF EXISTS audit_log`);
    await q.query(`DELETE FROM console_sessions WHERE operator_id IS NOT NULL`);
    await q.query(`ALTER TABLE console_sessions DROP COLUMN IF EXISTS operator_id`);
    await q.query(`DROP TABLE IF EXISTS operators`);
    await q.query(`DROP TABLE IF EXISTS api_keys`);
  }
}

/**
 * The trigger's function, as first created: its live text is src/inventory/ledger/movement-principal.sql,
 * re-applied from there at every start; created here because a trigger must name an existing function.
 */
const PRINCIPAL_TRIGGER_FUNCTION = `CREATE OR REPLACE FUNCTION tcc_movement_principal() RETURNS trigger
LANGUAGE plpgsql
AS $fn$
BEGIN
  IF NEW.principal_type IS NULL THEN
    NEW.principal_type := CASE WHEN NEW.actor IN ('admin', 'console') THEN 'root' ELSE 'system' END;
  END IF;
  RETURN NEW;
END
$fn$`;
