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
 * another), and keys another transaction is claiming right now (one of them made an order); then
 * batches of the common shape, which the probe judges by a statement of its own. The try path runs
 * inside a transaction that is rolled back, so every batch meets the same state.
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
      return { key, hash, lines, locationIds };
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

it('the common shape (one line per order, no allowed locations) is judged by its own statement, alike', async () => {
  const next = rng(20261129);
  const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
  const pool = [...Object.values(SKUS), SKUS.none, SKUS.none, SKUS.three, ...UNKNOWN];
  const seen = new Set<string>();
  for (let round = 0; round < 200; round++) {
    const used = new Set<string>();
    const orders: Order[] = Array.from({ length: 1 + Math.floor(next() * 30) }, () => {
      const kind = next();
      let key = `pk-${randomUUID()}`;
      let hash = `h-${key}`;
      if (kind < 0.05) key = HELD;
      else if (kind < 0.15) {
        key = pick(EXISTING);
        hash = next() < 0.5 ? `h-${key}` : `h-other-${key}`;
      }
      if (used.has(key)) key = `pk-${randomUUID()}`;
      used.add(key);
      return { key, hash, lines: [{ sku: pick(pool), qty: 1 + Math.floor(next() * 6) }], locationIds: [] };
    });
    const probed = await probe(orders);
    await tryer.query('BEGIN');
    let tried: Row[];
    try {
      tried = await tryPath(tryer, orders);
    } finally {
      await tryer.query('ROLLBACK');
    }
    expect(probed.filter((r) => r.r_idx > 0).map((r) => r.r_idx).sort((a, b) => a - b)).toEqual(orders.map((_, i) => i + 1));
    for (const p of probed.filter((r) => r.r_idx > 0)) {
      seen.add(p.r_outcome);
      // Handed on: the batch decides (its earlier orders may take the stock first).
      if (p.r_outcome === 'retry') continue;
      expect({ round, answer: tried[p.r_idx - 1] }).toEqual({ round, answer: p });
    }
    const named = [...new Set(orders.map((o) => o.lines[0].sku))];
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
  expect([...seen].sort()).toEqual(['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED', 'INSUFFICIENT_STOCK', 'UNKNOWN_SKU', 'replayed', 'retry'].sort());
});

it('the common shape does not call the general judge; any other shape does', async () => {
  const judgeCalls = async (orders: Order[]): Promise<number> => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL track_functions = 'pl'`);
      const f = flat(orders);
      await client.query(`SELECT * FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[])`, [
        f.keys,
        f.hashes,
        f.lineOrder,
        f.skus,
        f.qty,
        f.locationOrder,
        f.locations,
      ]);
      const rows = await client.query<{ calls: string }>(`SELECT calls FROM pg_stat_xact_user_functions WHERE funcname = 'tcc_judge_trys'`);
      await client.query('ROLLBACK');
      return rows.rows.reduce((n, r) => n + Number(r.calls), 0);
    } finally {
      await client.end();
    }
  };
  const order = (lines: Order['lines'], locationIds: string[] = []): Order => {
    const key = `pk-${randomUUID()}`;
    return { key, hash: `h-${key}`, lines, locationIds };
  };
  expect(await judgeCalls([order([{ sku: SKUS.none, qty: 1 }]), order([{ sku: SKUS.three, qty: 4 }])])).toBe(0);
  expect(await judgeCalls([order([{ sku: SKUS.none, qty: 1 }]), order([{ sku: SKUS.none, qty: 1 }, { sku: SKUS.three, qty: 4 }])])).toBe(1);
  expect(await judgeCalls([order([{ sku: SKUS.none, qty: 1 }], ['default'])])).toBe(1);
});
