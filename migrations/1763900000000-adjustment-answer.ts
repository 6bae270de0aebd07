import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a keyed stock adjustment answered (its inventory JSON as written: `json`, not `jsonb`, so a
 * replay answers it key for key), kept on its movement: the same Idempotency-Key with the same body
 * answers the first result (API.md), not the inventory as it stands at the replay. Null for every
 * other movement, and for keyed adjustments made before this column (their replays answer today's
 * inventory, as they did).
 */
export class AdjustmentAnswer1763900000000 implements MigrationInterface {
  name = 'AdjustmentAnswer1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE stock_movements ADD COLUMN answer_inventory json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE stock_movements DROP COLUMN answer_inventory`);
  }
}
