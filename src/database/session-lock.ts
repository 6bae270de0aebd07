import type { Db } from './db.js';

/** Advisory lock keys of the "one process at a time" jobs; one place, so two never collide. */
export const SESSION_LOCKS = {
  migrations: 0x7cc5_0000,
  sweeper: 0x7cc5_0001,
  reconciliation: 0x7cc5_0002,
  retention: 0x7cc5_0003,
  webhookSweep: 0x7cc5_0004,
  inventoryConsistency: 0x7cc5_0006,
  /** Transaction-level: the SQL functions applied after the migrations (sql-functions.ts). */
  sqlFunctions: 0x7cc5_0005,
  consoleSessions: 0x7cc5_00c0,
} as const;

/**
 * Runs `work` only if this process wins the session advisory lock `key`, holding it (on a
 * connection of its own) until `work` ends. Returns undefined when another process holds it.
 * A process that dies loses its session, and with it the lock: nothing to clean up.
 */
export async function withSessionLock<T>(db: Db, key: number, work: () => Promise<T>): Promise<T | undefined> {
  const client = await db.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    if (!rows[0]?.locked) return undefined;
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
