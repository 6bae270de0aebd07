import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SessionLocks } from '../../src/database/session-lock.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { PgProxy, startPgProxy } from '../support/pg-proxy.js';

/**
 * The election of periodic jobs (src/database/session-lock.ts) on a server that goes dark without
 * closing the connection (a host gone, a firewall that forgot it): the lock query gives up after
 * its timeout and drops the session, and the next job opens a new one, instead of waiting for TCP
 * to give up many minutes later while every periodic job of the process stands still. And the
 * jobs that fall due together (the sweeper's and the poller's intervals meet every second) take
 * turns on that one session: pg 8 queues a query sent while another runs, with a deprecation, and
 * pg 9 refuses it.
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

it('jobs that fall due together take turns on the one session: no query is sent while another runs', async () => {
  // In a process of its own with --throw-deprecation: pg 8's warning for a query sent while the
  // client is busy becomes the error pg 9 will throw, and fails the run.
  const script = `
    import { SessionLocks } from './dist/database/session-lock.js';
    const locks = new SessionLocks(process.env.SPEC_DB_URL, 'session-lock-spec');
    const keys = [1, 2, 3, 4, 5, 6].map((i) => ${KEY} + i);
    const ran = [];
    for (let round = 0; round < 3; round++) ran.push(await Promise.all(keys.map((k) => locks.withLock(k, async () => k))));
    await locks.close();
    console.log(JSON.stringify(ran));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--throw-deprecation', '--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, SPEC_DB_URL: db.url },
  });
  const keys = [1, 2, 3, 4, 5, 6].map((i) => KEY + i);
  expect(JSON.parse(stdout)).toEqual([keys, keys, keys]);
}, 15_000);
