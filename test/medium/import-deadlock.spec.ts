import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { waitingOnLock } from '../support/database.js';
import { useSessions } from '../support/medium.js';

/**
 * Two imports naming the same two SKUs, A and B, while other writers create them
 * (tcc_inventory_import, step 2). Import K starts when neither exists, so both are new to it; it
 * creates A, which a third transaction is creating, and waits for it. Meanwhile B is committed by a
 * fourth, and import L starts: B exists for it (with other values, so it must lock B), A is new. When
 * A's creator commits, K and L race for A. Locking the existing SKUs before creating the new ones,
 * L held B while waiting for A, and K, having A, waited for B: a deadlock, one import refused. One
 * pass over all of them in byte order cannot form that cycle: every round, both succeed.
 */
const IMPORT = `SELECT r_outcome FROM tcc_inventory_import($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $7::int[], $8::int[], $9, $10)`;
const importArgs = (skus: string[], price: number) => [skus, skus.map(() => null), skus.map(() => price), skus.map(() => 'USD'), skus.map(() => null), skus.map(() => 'default'), skus.map(() => 5), skus.map(() => null), 'admin', null];

const s = useSessions(4);

async function importIn(c: pg.Client, skus: string[], price: number): Promise<string> {
  await c.query('BEGIN');
  try {
    const { rows } = await c.query<{ r_outcome: string }>(IMPORT, importArgs(skus, price));
    await c.query('COMMIT');
    return rows[0].r_outcome;
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  }
}

it('two imports, one seeing a SKU as new that the other sees as existing: both succeed, every round', async () => {
  const [creatorA, creatorB, k, l] = s.clients;
  const pidOf = async (c: pg.Client) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const [kPid, lPid] = [await pidOf(k), await pidOf(l)];
  const tag = randomBytes(3).toString('hex').toUpperCase();
  const outcomes: PromiseSettledResult<string>[][] = [];
  for (let round = 0; round < 10; round++) {
    const [a, b] = [`DL-${tag}-${round}-A`, `DL-${tag}-${round}-B`];
    await creatorA.query('BEGIN');
    await creatorA.query(`INSERT INTO skus (sku, price_minor, currency) VALUES ($1, 100, 'USD')`, [a]);
    await creatorB.query('BEGIN');
    await creatorB.query(`INSERT INTO skus (sku, price_minor, currency) VALUES ($1, 100, 'USD')`, [b]);
    const kDone = importIn(k, [a, b], 100);
    await waitingOnLock(s.db, kPid); // K: both new; creating A, it waits for A's creator
    await creatorB.query('COMMIT');
    const lDone = importIn(l, [a, b], 200);
    await waitingOnLock(s.db, lPid); // L: B existing (a price to change), A new, waiting for A's creator
    await creatorA.query('COMMIT');
    outcomes.push(await Promise.allSettled([kDone, lDone]));
  }
  const refused = outcomes.flatMap((o, round) => o.filter((r) => r.status === 'rejected').map((r) => `round ${round}: ${String((r as PromiseRejectedResult).reason)}`));
  expect(refused).toEqual([]);
  expect(outcomes.flat().map((o) => (o as PromiseFulfilledResult<string>).value)).toEqual(outcomes.flat().map(() => 'ok'));
}, 60_000);
