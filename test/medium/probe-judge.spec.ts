import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { XACT_LOCK_SPACES } from '../../src/database/session-lock.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { rng } from '../support/rng.js';

/**
 * The sold-out probe (tcc_probe) answers a Try without the locks the try path takes. Whatever it
 * refuses, the try path (tcc_try_batch) must refuse alike on the same committed state — same code,
 * same SKU, same requested and available, same location, same replayed order — and what it cannot
 * refuse it hands on ('retry'). Here both answer the same random batches: multi-line orders over
 * SKUs with stock at several locations (one inactive, safety stock, nothing at some), unknown SKUs
 * and locations, two currencies, `locationIds`, keys that already made an order (same body or
 * another), and keys another transaction is claiming right now (one of them made an order). The
 * try path runs inside a transaction that is rolled back, so every batch meets the same state.
 * Batches of the common shape have a judge of their own (tcc_judge_one_line), held here to the
 * general one row for row.
 */
let db: TestDatabase;
let holder: pg.Client;
let tryer: pg.Client;

const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];
const tag = randomUUID().slice(0, 8);
const SKUS = { none: `P0-${tag}`, three: `P3-${tag}`, euro: `PE-${tag}`, two: `P2-${tag}`, plenty: `P9-${tag}`, split: `PS-${tag}` };
const UNKNOWN = [`PU1-${tag}`, `PU2-${tag}`];
const LOCATIONS = { store: `store-${tag}`, depot: `depot-${tag}`, closed: `closed-${tag}` };
const EXISTING = Array.from({ length: 4 }, (_, i) => `pk-existing-${i}-${tag}`);
const HELD = `pk-held-${tag}`;

interface Order {
  key: string;
  hash: string;
  lines: { sku: string; qty: number }[];
  locationIds: string[];
}

/** The batch as both functions take it: each line and each allowed location names its order. */
function flat(orders: Order[]) {
  return {
    keys: orders.map((o) => o.key),
    hashes: orders.map((o) => o.hash),
    lineOrder: orders.flatMap((o, i) => o.lines.map(() => i + 1)),
    skus: orders.flatMap((o) => o.lines.map((l) => l.sku)),
    qty: orders.flatMap((o) => o.lines.map((l) => l.qty)),
    locationOrder: orders.flatMap((o, i) => o.locationIds.map(() => i + 1)),
    locations: orders.flatMap((o) => o.locationIds),
  };
}

type Row = { r_idx: number; r_outcome: string; r_body: string | null; r_sku: string | null; r_requested: number | null; r_available: number | null; r_location: string | null };

async function tryPath(client: pg.Client | pg.Pool, orders: Order[]): Promise<Row[]> {
  const f = flat(orders);
  return (
    await client.query<Row>(
      `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available, r_location
         FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[], 'priority', 600000, 0, $9::text[], NULL)
        WHERE r_idx > 0 ORDER BY r_idx`,
      [f.keys, f.hashes, orders.map(() => 'c-probe'), f.lineOrder, f.skus, f.qty, f.locationOrder, f.locations, HOLDING],
    )
  ).rows;
}

/**
 * An order's key in a random batch: the held one (below `heldBelow`), one that made an order, with
 * the same body or another (below `existingBelow`), else a new one; never twice in a batch (Batcher).
 */
function randomKey(next: () => number, used: Set<string>, heldBelow: number, existingBelow: number): { key: string; hash: string } {
  const kind = next();
  let key = `pk-${randomUUID()}`;
  let hash = `h-${key}`;
  if (kind < heldBelow) key = HELD;
  else if (kind < existingBelow) {
    key = EXISTING[Math.floor(next() * EXISTING.length)];
    hash = next() < 0.5 ? `h-${key}` : `h-other-${key}`;
  }
  if (used.has(key)) key = `pk-${randomUUID()}`;
  used.add(key);
  return { key, hash };
}

async function probe(orders: Order[]): Promise<Row[]> {
  const f = flat(orders);
  return db.query<Row>(
    `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available, r_location FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[])`,
    [f.keys, f.hashes, f.lineOrder, f.skus, f.qty, f.locationOrder, f.locations],
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.query(`INSERT INTO locations (id, name, priority, active) VALUES ($1, 'store', 5, true), ($2, 'depot', 9, true), ($3, 'closed', 1, false)`, [
    LOCATIONS.store,
    LOCATIONS.depot,
    LOCATIONS.closed,
  ]);
  const skus: [string, string][] = [
    [SKUS.none, 'USD'],
    [SKUS.three, 'USD'],
    [SKUS.euro, 'EUR'],
    [SKUS.two, 'USD'],
    [SKUS.plenty, 'USD'],
    [SKUS.split, 'USD'],
  ];
  for (const [sku, currency] of skus) await db.query(`INSERT INTO skus (sku, name, price_minor, currency) VALUES ($1, $1, 100, $2)`, [sku, currency]);
  // The stock, set through the ledger: [sku, location, on hand, safety stock].
  const stock: [string, string, number, number][] = [
    [SKUS.none, 'default', 0, 0],
    [SKUS.three, 'default', 3, 0],
    [SKUS.euro, 'default', 5, 0],
    [SKUS.two, 'default', 10, 8],
    [SKUS.plenty, 'default', 1000, 0],
    [SKUS.split, 'default', 1, 0],
    [SKUS.split, LOCATIONS.store, 2, 1],
    [SKUS.split, LOCATIONS.depot, 3, 0],
    [SKUS.split, LOCATIONS.closed, 50, 0],
    [SKUS.three, LOCATIONS.closed, 9, 0],
  ];
  for (const [sku, location, onHand, safety] of stock) {
    const [{ r_outcome }] = await db.query(`SELECT r_outcome FROM tcc_stock_set($1, $2, $3, $4, NULL, 'system', NULL)`, [sku, location, onHand, safety]);
    expect(r_outcome).toBe('ok');
  }
  // Keys that already made an order (the try path itself writes them).
  const made = await tryPath(db.pool, EXISTING.map((key) => ({ key, hash: `h-${key}`, lines: [{ sku: SKUS.plenty, qty: 1 }], locationIds: [] })));
  expect(made.map((r) => r.r_outcome)).toEqual(EXISTING.map(() => 'created'));
  // Keys another transaction is claiming right now.
  holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [XACT_LOCK_SPACES.idempotencyKey.space, HELD]);
  // And a key that made an order, claimed again right now (a replay racing a replay).
  await holder.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [XACT_LOCK_SPACES.idempotencyKey.space, EXISTING[3]]);
  tryer = new pg.Client({ connectionString: db.url });
  await tryer.connect();
});

afterAll(async () => {
  await holder?.query('ROLLBACK').catch(() => undefined);
  await holder?.end();
  await tryer?.end();
  await db?.drop();
});

it('refuses nothing the try path would not refuse alike on the same state, and hands on the rest', async () => {
  const next = rng(20261126);
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  const pool = [...Object.values(SKUS), ...Object.values(SKUS), ...UNKNOWN];
  const places = ['default', ...Object.values(LOCATIONS), `nowhere-${tag}`];
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
      const locationIds = next() < 0.3 ? [...new Set([pick(places), pick(places)])] : [];
      return { ...randomKey(next, used, 0.1, 0.25), lines, locationIds };
    });

    const probed = await probe(orders);
    await tryer.query('BEGIN');
    let tried: Row[];
    try {
      tried = await tryPath(tryer, orders);
    } finally {
      await tryer.query('ROLLBACK');
    }
    for (const p of probed.filter((r) => r.r_idx > 0)) {
      seen.add(p.r_outcome);
      if (p.r_outcome === 'retry') continue;
      expect({ round, answer: tried[p.r_idx - 1] }).toEqual({ round, answer: p });
    }

    // The stock rows: what every known SKU the batch names holds at its active locations, as committed.
    const named = [...new Set(orders.flatMap((o) => o.lines.map((l) => l.sku)))];
    const stock = await db.query(
      `SELECT st.sku AS r_sku, sum(CASE WHEN l.active THEN greatest(st.on_hand - st.reserved - st.safety_stock, 0) ELSE 0 END)::int AS r_available
         FROM stock st JOIN locations l ON l.id = st.location_id WHERE st.sku = ANY ($1::text[]) GROUP BY st.sku ORDER BY st.sku`,
      [named],
    );
    expect(
      probed
        .filter((r) => r.r_idx === 0)
        .map((r) => ({ r_sku: r.r_sku, r_available: r.r_available }))
        .sort((a, b) => (a.r_sku! < b.r_sku! ? -1 : 1)),
    ).toEqual(stock);
  }
  // The batches did reach every answer the probe can give.
  expect([...seen].sort()).toEqual(
    ['CURRENCY_MISMATCH', 'IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED', 'INSUFFICIENT_STOCK', 'UNKNOWN_LOCATION', 'UNKNOWN_SKU', 'replayed', 'retry'].sort(),
  );
});

type JudgeRow = Row & { r_order_id: string | null };

/** One judge's rows for a batch, in a transaction of its own (its key locks end with it); `locked`: the caller takes them first. */
async function judge(sql: string, args: unknown[], locked = false): Promise<JudgeRow[]> {
  await tryer.query('BEGIN');
  try {
    const free = locked ? [(await tryer.query<{ free: boolean[] }>('SELECT tcc_try_lock_keys($1::text[]) AS free', [args[0]])).rows[0].free] : [];
    const rows = (await tryer.query<JudgeRow>(sql, [...free, ...args])).rows;
    return rows.sort((a, b) => a.r_idx - b.r_idx || (a.r_sku ?? '').localeCompare(b.r_sku ?? ''));
  } finally {
    await tryer.query('ROLLBACK');
  }
}

const COLUMNS = 'r_idx, r_outcome, r_order_id, r_body, r_sku, r_requested, r_available, r_location';

it('the common shape (one line per order, no allowed locations) has a judge of its own: the same rows as the general judge', async () => {
  const next = rng(20261129);
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  const pool = [...Object.values(SKUS), SKUS.none, SKUS.none, SKUS.three, SKUS.split, ...UNKNOWN];
  const seen = new Set<string | null>();
  for (let round = 0; round < 200; round++) {
    const used = new Set<string>();
    const orders: Order[] = Array.from({ length: 1 + Math.floor(next() * 30) }, () => {
      const { key, hash } = randomKey(next, used, 0.05, 0.2);
      return { key, hash, lines: [{ sku: pick(pool), qty: 1 + Math.floor(next() * 6) }], locationIds: [] };
    });
    const f = flat(orders);
    const general = await judge(`SELECT ${COLUMNS} FROM tcc_judge_trys($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], '{}', '{}', true)`, [
      f.keys,
      f.hashes,
      f.lineOrder,
      f.skus,
      f.qty,
    ]);
    const own = await judge(`SELECT ${COLUMNS} FROM tcc_judge_one_line($1::boolean[], $2::text[], $3::text[], $4::text[], $5::int[])`, [f.keys, f.hashes, f.skus, f.qty], true);
    expect({ round, rows: own }).toEqual({ round, rows: general });
    for (const r of own) if (r.r_idx > 0) seen.add(r.r_outcome);
  }
  // Every answer the shape allows, and orders left open (NULL).
  expect([...seen].sort()).toEqual(['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED', 'INSUFFICIENT_STOCK', 'UNKNOWN_SKU', 'replayed', null].sort());
});

it('tcc_probe and tcc_try_batch take that judge for that shape only', async () => {
  /**
   * Calls of the general judge while one statement ran, from the transaction's own function
   * statistics (the common shape's judge is inlined: it is never called), and the rows answered.
   */
  const judgesCalled = async (sql: string, args: unknown[]): Promise<{ general: number; rows: number }> => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL track_functions = 'pl'`);
      const answered = (await client.query<{ r_idx: number }>(sql, args)).rows.filter((r) => r.r_idx > 0).length;
      const rows = (await client.query<{ calls: string }>(`SELECT calls FROM pg_stat_xact_user_functions WHERE funcname = 'tcc_judge_trys'`)).rows;
      await client.query('ROLLBACK');
      return { general: rows.reduce((n, r) => n + Number(r.calls), 0), rows: answered };
    } finally {
      await client.end();
    }
  };
  const order = (lines: Order['lines'], locationIds: string[] = []): Order => {
    const key = `pk-${randomUUID()}`;
    return { key, hash: `h-${key}`, lines, locationIds };
  };
  const viaProbe = (orders: Order[]) => {
    const f = flat(orders);
    return judgesCalled(`SELECT * FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[])`, [
      f.keys,
      f.hashes,
      f.lineOrder,
      f.skus,
      f.qty,
      f.locationOrder,
      f.locations,
    ]);
  };
  const viaTry = (orders: Order[], maxHolding: number) => {
    const f = flat(orders);
    return judgesCalled(
      `SELECT * FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[], 'priority', 600000, $9::int, $10::text[], NULL)`,
      [f.keys, f.hashes, orders.map(() => 'c-probe'), f.lineOrder, f.skus, f.qty, f.locationOrder, f.locations, maxHolding, HOLDING],
    );
  };
  const oneLine = [order([{ sku: SKUS.none, qty: 1 }]), order([{ sku: SKUS.plenty, qty: 4 }])];
  const twoLines = [order([{ sku: SKUS.none, qty: 1 }]), order([{ sku: SKUS.none, qty: 1 }, { sku: SKUS.three, qty: 4 }])];
  const atStore = [order([{ sku: SKUS.split, qty: 1 }], [LOCATIONS.store])];
  expect(await viaProbe(oneLine)).toEqual({ general: 0, rows: 2 });
  expect(await viaProbe(twoLines)).toEqual({ general: 1, rows: 2 });
  expect(await viaProbe(atStore)).toEqual({ general: 1, rows: 1 });
  expect(await viaTry(oneLine, 0)).toEqual({ general: 0, rows: 2 });
  expect(await viaTry(twoLines, 0)).toEqual({ general: 1, rows: 2 });
  expect(await viaTry(atStore, 0)).toEqual({ general: 1, rows: 1 });
  // With the hold limit on, only the keys are judged first: the general judge's mode for it.
  expect(await viaTry(oneLine, 5)).toEqual({ general: 1, rows: 2 });
});
