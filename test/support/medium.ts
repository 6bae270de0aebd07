import pg from 'pg';
import { createTestDatabase, TestDatabase } from './database.js';

export type Query = <T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: unknown[]) => Promise<T[]>;

export interface RolledBack {
  db: TestDatabase;
  /**
   * Runs `fn` in a transaction that is rolled back afterwards, so every test meets the template's
   * state. Before the rollback the deferred constraints and triggers run (SET CONSTRAINTS ALL
   * IMMEDIATE), as a commit would run them: what they refuse fails the test.
   */
  tx<T>(fn: (q: Query) => Promise<T>): Promise<T>;
}

/**
 * The medium tier's world (test/medium/): a database cloned from the migrated template — the
 * service's schema and SQL functions, as at start-up — and one connection to it; no service
 * process, no Redis, no HTTP. Registers its own beforeAll/afterAll.
 */
export function useRolledBack(): RolledBack {
  const r = {} as RolledBack;
  let client: pg.Client;
  beforeAll(async () => {
    r.db = await createTestDatabase();
    client = new pg.Client({ connectionString: r.db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await r.db?.drop();
  });
  r.tx = async (fn) => {
    const q: Query = async (text, params) => (await client.query(text, params)).rows;
    await client.query('BEGIN');
    try {
      const result = await fn(q);
      await client.query('SET CONSTRAINTS ALL IMMEDIATE');
      return result;
    } finally {
      await client.query('ROLLBACK');
    }
  };
  return r;
}

/**
 * For a medium spec whose transactions meet each other: a database of its own (cloned from the
 * migrated template) and `count` connections to it, each a session of its own, committing for real.
 * Registers its own beforeAll/afterAll.
 */
export function useSessions(count: number): { db: TestDatabase; clients: pg.Client[] } {
  const s = { clients: [] as pg.Client[] } as { db: TestDatabase; clients: pg.Client[] };
  beforeAll(async () => {
    s.db = await createTestDatabase();
    for (let i = 0; i < count; i++) {
      const c = new pg.Client({ connectionString: s.db.url });
      await c.connect();
      s.clients.push(c);
    }
  });
  afterAll(async () => {
    await Promise.all(s.clients.map((c) => c.end()));
    await s.db?.drop();
  });
  return s;
}
