import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whether a charge request of an order may have reached the gateway (payment_sent_at), beside
 * whether one was requested (payment_requested_at, which fixes the payment token): a claim sets
 * both, and when the open breaker keeps an order's first request from leaving, the move recording
 * it clears payment_sent_at again. Only an order that may have been charged is put on a refund
 * watch when it is released, so one the gateway never saw cannot raise a false alarm while the
 * gateway is away. Orders still holding stock take their requested time (the safe side); finished
 * ones have had their watch decided already.
 */
export class PaymentSent1763876000000 implements MigrationInterface {
  name = 'PaymentSent1763876000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders ADD COLUMN payment_sent_at timestamptz`);
    await q.query(`UPDATE orders SET payment_sent_at = payment_requested_at WHERE payment_requested_at IS NOT NULL AND status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders DROP COLUMN payment_sent_at`);
  }
}
