import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator's name given at sign-in ("Your name"), kept with the session: every change made in
 * that session records it (timeline events, ledger movements).
 */
export class ConsoleOperator1763845000000 implements MigrationInterface {
  name = 'ConsoleOperator1763845000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE console_sessions ADD COLUMN operator text CHECK (char_length(operator) BETWEEN 1 AND 100)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE console_sessions DROP COLUMN operator`);
  }
}
