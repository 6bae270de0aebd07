import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the SQL function runner (src/database/sql-functions.ts) has applied: per file, its function
 * and the checksum of the text that made it. After the migrations, a file whose checksum differs
 * (or is missing here) is applied again; the others are left alone.
 */
export class SqlFunctions1763840000000 implements MigrationInterface {
  name = 'SqlFunctions1763840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sql_functions (
        file           text PRIMARY KEY,
        function_name  text NOT NULL,
        checksum       text NOT NULL,
        applied_at     timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS sql_functions`);
  }
}
