import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery sent again by its own retry route gets one more attempt (API.md: "sends it again (same
 * webhook-id; one more attempt)"), not a fresh round: the attempt it may make last is kept on it.
 * Null (the rest): WEBHOOK_MAX_ATTEMPTS, as before.
 */
export class DeliveryAttemptLimit1763910000000 implements MigrationInterface {
  name = 'DeliveryAttemptLimit1763910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN attempt_limit int CHECK (attempt_limit > 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN attempt_limit`);
  }
}
