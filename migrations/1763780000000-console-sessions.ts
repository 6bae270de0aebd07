import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operator console sessions. The cookie's session id is never stored: only a SHA-256 hash of it
 * (keyed by the admin token, so rotating the token ends every session), next to the anti-CSRF
 * token the page sends back on state changes. Shared by every api process, so a session opened on
 * one is honoured and ended on all.
 */
export class ConsoleSessions1763780000000 implements MigrationInterface {
  name = 'ConsoleSessions1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE console_sessions (
        id_hash     bytea PRIMARY KEY,
        csrf_token  text NOT NULL,
        expires_at  timestamptz NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // The periodic purge deletes by expiry.
    await q.query(`CREATE INDEX console_sessions_expires ON console_sessions (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS console_sessions`);
  }
}
