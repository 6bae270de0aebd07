import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Once the second version of the group-commit engine's functions (fewer statements per call, plans
 * pinned) and the first sold-out probe. The functions now live in .sql files applied after the
 * migrations (src/database/sql-functions.ts), so there is nothing left to do here; the migration
 * stays so that databases that ran it and databases that did not keep one list of migrations.
 * Its down() no longer restores any function body.
 */
export class LeanEngine1763820000000 implements MigrationInterface {
  name = 'LeanEngine1763820000000';

  async up(_q: QueryRunner): Promise<void> {}

  async down(_q: QueryRunner): Promise<void> {}
}
