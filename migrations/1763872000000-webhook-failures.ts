import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a failing webhook endpoint answered, kept when the attempt is recorded so an operator sees
 * why it fails: each delivery's last HTTP status and the first 200 characters of the body (never
 * the request: the URL may carry a token), and on the endpoint its most recent failure. Deliveries
 * of the last hour are found by (webhook_name, updated_at).
 */
export class WebhookFailures1763872000000 implements MigrationInterface {
  name = 'WebhookFailures1763872000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN last_status int, ADD COLUMN last_response text CHECK (char_length(last_response) <= 200)`);
    await q.query(`ALTER TABLE webhooks ADD COLUMN last_failure jsonb`);
    await q.query(`CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (webhook_name, updated_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_recent`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN IF EXISTS last_failure`);
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS last_status, DROP COLUMN IF EXISTS last_response`);
  }
}
