import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What retention (src/recovery/retention.ts) needs to find old rows without reading a table
 * whole. Finished orders are found through orders_created and webhook deliveries through
 * webhook_deliveries_by_status, which exist already; outside coordinators' finished branches need
 * an index of their own: the barrier's primary key starts with the transaction id, not its age.
 * Only the 'confirm' and 'cancel' rows of 'ext:' transactions enter it, so this service's own
 * orders (the hot path) never pay for it.
 *
 * Built CONCURRENTLY, outside a transaction: the barrier takes a row per Try, and a plain CREATE
 * INDEX would hold those inserts for as long as the build reads the table.
 */
export class Retention1763800000000 implements MigrationInterface {
  name = 'Retention1763800000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    // A build interrupted last time leaves an invalid index behind, which IF NOT EXISTS would keep.
    await dropIfInvalid(q, 'tcc_barrier_ext_finished');
    await q.query(`
      CREATE INDEX CONCURRENTLY IF NOT EXISTS tcc_barrier_ext_finished ON tcc_barrier (created_at)
       WHERE op IN ('confirm', 'cancel') AND transaction_id LIKE 'ext:%'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS tcc_barrier_ext_finished`);
  }
}

async function dropIfInvalid(q: QueryRunner, index: string): Promise<void> {
  const rows: { invalid: boolean }[] = await q.query(
    `SELECT NOT i.indisvalid AS invalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1 AND pg_table_is_visible(c.oid)`,
    [index],
  );
  if (rows[0]?.invalid) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index}`);
}
