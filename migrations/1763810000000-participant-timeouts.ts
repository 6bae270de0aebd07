import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outside coordinators' branches (/tcc/inventory/*) as rows with a deadline: an abandoned branch
 * (its coordinator died) is canceled by the service at `expires_at`, through the same barrier as a
 * Cancel, so it can never hold stock forever. The barrier stays the truth of each phase; this
 * table adds what the barrier has no room for (items, deadline) and what operators list.
 * Branches reserved before this migration get 15 minutes from now.
 */
export class ParticipantTimeouts1763810000000 implements MigrationInterface {
  name = 'ParticipantTimeouts1763810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE participant_branches (
        transaction_id  text PRIMARY KEY,
        status          text NOT NULL CHECK (status IN ('RESERVED', 'CONFIRMED', 'CANCELED')),
        items           jsonb NOT NULL DEFAULT '[]'::jsonb,
        created_at      timestamptz NOT NULL DEFAULT now(),
        expires_at      timestamptz NOT NULL,
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX participant_branches_reserved ON participant_branches (expires_at) WHERE status = 'RESERVED'`);
    await q.query(`CREATE INDEX participant_branches_created ON participant_branches (created_at, transaction_id)`);
    await q.query(`
      INSERT INTO participant_branches (transaction_id, status, items, created_at, expires_at, updated_at)
      SELECT t.transaction_id,
             CASE WHEN EXISTS (SELECT 1 FROM tcc_barrier c WHERE c.transaction_id = t.transaction_id AND c.op = 'cancel') THEN 'CANCELED'
                  WHEN EXISTS (SELECT 1 FROM tcc_barrier c WHERE c.transaction_id = t.transaction_id AND c.op = 'confirm') THEN 'CONFIRMED'
                  ELSE 'RESERVED' END,
             coalesce((SELECT jsonb_agg(jsonb_build_object('sku', r.sku, 'quantity', r.quantity) ORDER BY r.sku COLLATE "C")
                         FROM reservations r WHERE r.transaction_id = t.transaction_id), '[]'::jsonb),
             t.created_at, now() + interval '15 minutes', now()
        FROM tcc_barrier t
       WHERE t.op = 'try' AND t.transaction_id LIKE 'ext:%'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS participant_branches`);
  }
}
