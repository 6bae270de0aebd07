import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A refund is on its order's timeline (and announced, `refund.succeeded`) once: two money-back
 * rounds that both got the gateway's answer for one refund record it once. Copies already there
 * are dropped first, the earliest kept.
 *
 * Built CONCURRENTLY, outside a transaction: every order change writes its events, and a plain
 * CREATE INDEX would hold them (and so the checkout) for as long as the build reads the table. A
 * build interrupted last time leaves an invalid index behind: it is dropped first.
 */
export class RefundRecordedOnce1763930000000 implements MigrationInterface {
  name = 'RefundRecordedOnce1763930000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS order_events_refund_once`);
    await q.query(`
      DELETE FROM order_events WHERE id IN (
        SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY order_id, data->>'refundId' ORDER BY id) AS n
                          FROM order_events WHERE type = 'refund.succeeded' AND data->>'refundId' IS NOT NULL) copies
         WHERE n > 1)`);
    await q.query(`CREATE UNIQUE INDEX CONCURRENTLY order_events_refund_once ON order_events (order_id, (data->>'refundId')) WHERE type = 'refund.succeeded'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS order_events_refund_once`);
  }
}
