import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A refund is on its order's timeline (and announced, `refund.succeeded`) once: two money-back
 * rounds that both saw the gateway's answer for one refund (a round that outlived its lease and
 * the round that took over, both replaying the refund's key) record it once. Copies already there
 * are dropped first, the earliest kept.
 */
export class RefundRecordedOnce1763930000000 implements MigrationInterface {
  name = 'RefundRecordedOnce1763930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM order_events a USING order_events b
       WHERE a.type = 'refund.succeeded' AND b.type = 'refund.succeeded' AND a.order_id = b.order_id
         AND a.data->>'refundId' = b.data->>'refundId' AND a.id > b.id`);
    await q.query(`CREATE UNIQUE INDEX order_events_refund_once ON order_events (order_id, (data->>'refundId')) WHERE type = 'refund.succeeded'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS order_events_refund_once`);
  }
}
