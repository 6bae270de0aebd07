import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * State the periodic jobs keep between runs (where the scheduled reconciliation got to, when it
 * last succeeded), shared by every process, and the indexes reconciliation and the refund sweep
 * read through.
 */
export class OperationsState1763770000000 implements MigrationInterface {
  name = 'OperationsState1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE job_state (
        name        text PRIMARY KEY,
        state       jsonb NOT NULL DEFAULT '{}'::jsonb,
        updated_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // Orders ever sent to the gateway, in the order reconciliation pages through them.
    await q.query(`CREATE INDEX orders_sent_created ON orders (created_at, id) WHERE payment_requested_at IS NOT NULL`);
    // A refund that needs attention is still retried: the sweeper's index covers both open states.
    await q.query(`DROP INDEX IF EXISTS orders_refund_due`);
    await q.query(`CREATE INDEX orders_refund_due ON orders (refund_next_at) WHERE refund_status IN ('PENDING', 'NEEDS_ATTENTION')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS orders_refund_due`);
    await q.query(`CREATE INDEX orders_refund_due ON orders (refund_next_at) WHERE refund_status = 'PENDING'`);
    await q.query(`DROP INDEX IF EXISTS orders_sent_created`);
    await q.query(`DROP TABLE IF EXISTS job_state`);
  }
}
