import { SessionLocks } from '../../src/database/session-lock.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { PgProxy, startPgProxy } from '../support/pg-proxy.js';

/**
 * The election of periodic jobs (src/database/session-lock.ts) on a server that goes dark without
 * closing the connection (a host gone, a firewall that forgot it): the lock query gives up after
 * its timeout and drops the session, and the next job opens a new one, instead of waiting for TCP
 * to give up many minutes later while every periodic job of the process stands still.
 */
const KEY = 0x7cc5_7e57;
let db: TestDatabase;
let proxy: PgProxy;

beforeAll(async () => {
  db = await createTestDatabase();
  proxy = await startPgProxy(db.url);
});
afterAll(async () => {
  await proxy?.close();
  await db?.drop();
});

it('a lock query unanswered past its timeout drops the session; the next job opens another and runs', async () => {
  const locks = new SessionLocks(proxy.url, 'session-lock-spec', 1000);
  try {
    expect(await locks.withLock(KEY, async () => 'ran')).toBe('ran');
    proxy.blackhole();
    await expect(locks.withLock(KEY, async () => 'ran in the dark')).rejects.toThrow();
    proxy.pass();
    expect(await locks.withLock(KEY, async () => 'ran again')).toBe('ran again');
  } finally {
    await locks.close();
  }
}, 15_000);
