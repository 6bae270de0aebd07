import { createHmac, randomBytes } from 'node:crypto';
import { Db, statement } from './db.js';

const SQL = {
  /** The first process to start makes it; the others find it (the INSERT waits for one being made). */
  make: statement('deployment_key_make', `INSERT INTO deployment_keys (name, key) VALUES ('main', $1) ON CONFLICT (name) DO NOTHING`),
  read: statement('deployment_key_read', `SELECT key FROM deployment_keys WHERE name = 'main'`),
} as const;

/**
 * The deployment's own random key: 32 bytes made once (deployment_keys), the same for every
 * process and across restarts, derived from no credential. What the service signs or salts with a
 * key of its own (paging cursors, the session table's token tag) derives that key from this one
 * and a purpose, so nothing it hands out or stores lets anyone check a guess of ADMIN_TOKEN.
 * Loaded at start-up (database.module.ts).
 */
export class DeploymentKey {
  private constructor(private readonly key: Buffer) {}

  static async load(db: Db): Promise<DeploymentKey> {
    await db.sql.exec(SQL.make, [randomBytes(32)]);
    // A later statement than the INSERT: it sees the key another process committed meanwhile.
    const row = await db.sql.one<{ key: Buffer }>(SQL.read);
    if (!row) throw new Error('deployment_keys holds no key');
    return new DeploymentKey(row.key);
  }

  /** A key for one purpose (`paging-cursors`, …): HMAC-SHA256 of the purpose under the deployment key. */
  derive(purpose: string): Buffer {
    return createHmac('sha256', this.key).update(purpose).digest();
  }
}
