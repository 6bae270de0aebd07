import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, TestDatabase } from './support/database.js';

/**
 * The sold-out probe (tcc_probe) has a text of its own, leaner than the judgement it shares its
 * answers with: the first pass of tcc_try_batch, which the try path runs under the locks. Whatever
 * the probe refuses, the try path must refuse alike — same code, same SKU, same requested and
 * available — and what it cannot refuse it must hand on ('retry'). Here both judge the same
 * batches, on the same committed state, and must agree row for row: random multi-line orders over
 * SKUs with and without stock, unknown SKUs, two currencies, keys that already made an order (same
 * body or another), and a key another transaction is claiming right now.
 */
let db: TestDatabase;
let holder: pg.Client;

const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];
const tag = randomUUID().slice(0, 8);
const SKUS = { none: `P0-${tag}`, three: `P3-${tag}`, euro: `PE-${tag}`, two: `P2-${tag}`, plenty: `P9-${tag}` };
const UNKNOWN = [`PU1-${tag}`, `PU2-${tag}`];
const EXISTING = Array.from({ length: 4 }, (_, i) => `pk-existing-${i}-${tag}`);
const HELD = `pk-held-${tag}`;

interface Order {
  key: string;
  hash: string;
  lines: { sku: string; qty: number }[];
}

/** A deterministic stream of numbers, so a failing run can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function tryBatchArgs(orders: Order[]): unknown[] {
  const starts: number[] = [];
  const counts: number[] = [];
  const skus: string[] = [];
  const qty: number[] = [];
  for (const o of orders) {
    starts.push(skus.length + 1);
    counts.push(o.lines.length);
    for (const l of o.lines) {
      skus.push(l.sku);
      qty.push(l.qty);
    }
  }
  return [orders.map((o) => o.key), orders.map((o) => o.hash), orders.map(() => 'c-probe'), starts, counts, skus, qty];
}

async function judgeByTryBatch(orders: Order[]): Promise<unknown[]> {
  return db.query(
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available
       FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::int[], 600000, 0, $8::text[], true)
      WHERE r_idx > 0 ORDER BY r_idx`,
    [...tryBatchArgs(orders), HOLDING],
  );
}

async function probe(orders: Order[]) {
  const lineOrder = orders.flatMap((o, i) => o.lines.map(() => i + 1));
  const skus = orders.flatMap((o) => o.lines.map((l) => l.sku));
  const qty = orders.flatMap((o) => o.lines.map((l) => l.qty));
  return db.query<{ r_idx: number; r_outcome: string; r_sku: string | null; r_available: number | null }>(
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[])`,
    [orders.map((o) => o.key), orders.map((o) => o.hash), lineOrder, skus, qty],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.query(
    `INSERT INTO skus (sku, name, on_hand, reserved, price_minor, currency) VALUES
       ($1, 'none', 0, 0, 100, 'USD'), ($2, 'three', 3, 0, 100, 'USD'), ($3, 'euro', 5, 0, 100, 'EUR'),
       ($4, 'two', 10, 8, 100, 'USD'), ($5, 'plenty', 1000, 0, 100, 'USD')`,
    [SKUS.none, SKUS.three, SKUS.euro, SKUS.two, SKUS.plenty],
  );
  // Keys that already made an order (the try path itself writes them).
  const made = await db.query<{ r_outcome: string }>(
    `SELECT r_outcome FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::int[], 600000, 0, $8::text[], false) WHERE r_idx > 0`,
    [...tryBatchArgs(EXISTING.map((key) => ({ key, hash: `h-${key}`, lines: [{ sku: SKUS.plenty, qty: 1 }] }))), HOLDING],
  );
  expect(made.map((r) => r.r_outcome)).toEqual(EXISTING.map(() => 'created'));
  // A key another transaction is claiming right now.
  holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query(`SELECT pg_advisory_xact_lock(7701, hashtext($1))`, [HELD]);
});

afterAll(async () => {
  await holder?.query('ROLLBACK').catch(() => undefined);
  await holder?.end();
  await db?.drop();
});

it('answers every batch as the try path would judge it on the same state', async () => {
  const next = rng(20261124);
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  const pool = [...Object.values(SKUS), ...Object.values(SKUS), ...UNKNOWN];
  const seen = new Set<string>();
  for (let round = 0; round < 300; round++) {
    const used = new Set<string>();
    const orders: Order[] = Array.from({ length: 1 + Math.floor(next() * 12) }, () => {
      const lines: Order['lines'] = [];
      const want = 1 + Math.floor(next() * 4);
      for (let tries = 0; lines.length < want && tries < 20; tries++) {
        const sku = pick(pool);
        if (!lines.some((l) => l.sku === sku)) lines.push({ sku, qty: 1 + Math.floor(next() * 6) });
      }
      const kind = next();
      let key = `pk-${randomUUID()}`;
      let hash = `h-${key}`;
      if (kind < 0.1) key = HELD;
      else if (kind < 0.25) {
        key = pick(EXISTING);
        hash = next() < 0.5 ? `h-${key}` : `h-other-${key}`;
      }
      if (used.has(key)) key = `pk-${randomUUID()}`; // a batch never holds one key twice (Batcher)
      used.add(key);
      return { key, hash, lines };
    });

    const expected = await judgeByTryBatch(orders);
    const rows = await probe(orders);
    expect(rows.filter((r) => r.r_idx > 0).sort((a, b) => a.r_idx - b.r_idx)).toEqual(expected);
    for (const r of rows) seen.add(r.r_outcome);

    // The stock rows: what is left of every known SKU the batch names, as committed.
    const named = [...new Set(orders.flatMap((o) => o.lines.map((l) => l.sku)))];
    const stock = await db.query(`SELECT sku AS r_sku, on_hand - reserved AS r_available FROM skus WHERE sku = ANY ($1::text[]) ORDER BY sku`, [named]);
    expect(
      rows
        .filter((r) => r.r_idx === 0)
        .map((r) => ({ r_sku: r.r_sku, r_available: r.r_available }))
        .sort((a, b) => (a.r_sku! < b.r_sku! ? -1 : 1)),
    ).toEqual(stock);
  }
  // The batches did reach every answer the probe can give.
  expect([...seen].sort()).toEqual(
    ['CURRENCY_MISMATCH', 'IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED', 'INSUFFICIENT_STOCK', 'UNKNOWN_SKU', 'replayed', 'retry', 'stock'].sort(),
  );
});
