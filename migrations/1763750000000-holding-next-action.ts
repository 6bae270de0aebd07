import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A Confirm whose process dies mid-call leaves a TRY_SUCCESS order with a leased next_action_at:
 * the sweeper's index must cover both holding states. Reconciliation reads recently finished
 * orders by updated_at.
 */
export class HoldingNextAction1763750000000 implements MigrationInterface {
  name = 'HoldingNextAction1763750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS orders_pending_next_action`);
    await q.query(`CREATE INDEX orders_holding_next_action ON orders (next_action_at) WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    await q.query(`CREATE INDEX orders_finished_updated ON orders (updated_at) WHERE status IN ('CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS orders_finished_updated`);
    await q.query(`DROP INDEX IF EXISTS orders_holding_next_action`);
    await q.query(`CREATE INDEX orders_pending_next_action ON orders (next_action_at) WHERE status = 'CONFIRM_PENDING'`);
  }
}
