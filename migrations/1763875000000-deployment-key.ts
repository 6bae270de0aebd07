import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A random key of the deployment's own (deployment_keys), made once at start-up by whichever
 * process comes first (src/database/deployment-key.ts) and shared by every process: paging cursors
 * are signed with keys derived from it, never from ADMIN_TOKEN, so a cursor in a shared link lets
 * nobody check a guess of the token.
 *
 * Console sessions stop being keyed by the admin token: a row holds a SHA-256 of its session id and
 * a slow salted hash (scrypt) of the token it was opened with, so a new ADMIN_TOKEN still ends every
 * session while a copy of the table and a session's cookie no longer check token guesses at the
 * speed of SHA-256. Sessions keyed the old way cannot be carried over: they are ended (operators
 * sign in again once).
 */
export class DeploymentKey1763875000000 implements MigrationInterface {
  name = 'DeploymentKey1763875000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE deployment_keys (
        name        text PRIMARY KEY,
        key         bytea NOT NULL CHECK (octet_length(key) >= 32),
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`DELETE FROM console_sessions`);
    await q.query(`ALTER TABLE console_sessions ADD COLUMN token_tag bytea NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM console_sessions`);
    await q.query(`ALTER TABLE console_sessions DROP COLUMN token_tag`);
    await q.query(`DROP TABLE IF EXISTS deployment_keys`);
  }
}
