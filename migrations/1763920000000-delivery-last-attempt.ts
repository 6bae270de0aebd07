import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whether a delivery's latest attempt got its 2xx: what the webhooks overview counts it as
 * (delivered or failed) while it is pending again — a delivered one sent again by its retry route
 * is not a failure while its new attempt is on its way. Null: no attempt made. The rows already
 * there are judged by their state: delivered ones by their 2xx, the others with attempts by a
 * failed one (as the overview counted them).
 */
export class DeliveryLastAttempt1763920000000 implements MigrationInterface {
  name = 'DeliveryLastAttempt1763920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN last_attempt_ok boolean`);
    await q.query(`UPDATE webhook_deliveries SET last_attempt_ok = (status = 'delivered') WHERE attempts > 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN last_attempt_ok`);
  }
}
