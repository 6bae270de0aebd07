import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Once the sold-out probe's second version (its lines naming their order). The function now lives
 * in src/orders/try/probe.sql, applied after the migrations (src/database/sql-functions.ts), which
 * also drops the first version's signature; the migration stays so that databases that ran it and
 * databases that did not keep one list of migrations. Its down() no longer restores any function body.
 */
export class LeanProbe1763830000000 implements MigrationInterface {
  name = 'LeanProbe1763830000000';

  async up(_q: QueryRunner): Promise<void> {}

  async down(_q: QueryRunner): Promise<void> {}
}
