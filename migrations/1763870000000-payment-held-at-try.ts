import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payment held at Try (API.md): an order whose Try carries a payment has its amount authorized
 * while its stock is held, captured at Confirm, voided on release. Its payment's own state lives on
 * the order row beside the order's status: `payment_status` (NULL for an order paid at Confirm),
 * what was authorized and until when, what was captured, and how many authorization attempts were
 * made (an unknown outcome is retried with the same key, then looked up). The key, the token, the
 * lease and the next step are the order's existing columns.
 */
export class PaymentHeldAtTry1763870000000 implements MigrationInterface {
  name = 'PaymentHeldAtTry1763870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE orders
        ADD COLUMN payment_status text
          CONSTRAINT orders_payment_status_check
          CHECK (payment_status IN ('authorizing', 'authorized', 'declined', 'capturing', 'captured', 'voiding', 'voided', 'expired')),
        ADD COLUMN authorized_minor bigint CONSTRAINT orders_authorized_minor_check CHECK (authorized_minor >= 0),
        ADD COLUMN captured_minor bigint NOT NULL DEFAULT 0 CONSTRAINT orders_captured_minor_check CHECK (captured_minor >= 0),
        ADD COLUMN authorization_expires_at timestamptz,
        ADD COLUMN authorize_attempts integer NOT NULL DEFAULT 0 CONSTRAINT orders_authorize_attempts_check CHECK (authorize_attempts >= 0),
        ADD CONSTRAINT orders_capture_within_authorization CHECK (authorized_minor IS NULL OR captured_minor <= authorized_minor)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE orders
        DROP CONSTRAINT orders_capture_within_authorization,
        DROP COLUMN authorize_attempts,
        DROP COLUMN authorization_expires_at,
        DROP COLUMN captured_minor,
        DROP COLUMN authorized_minor,
        DROP COLUMN payment_status`);
  }
}
