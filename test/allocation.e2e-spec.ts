import fc from 'fast-check';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { rng } from './support/rng.js';

/**
 * The allocation strategy (API.md, "Allocation") is one pure SQL function, tcc_allocate, and the
 * Try engine is held to it:
 * 1. properties of tcc_allocate on random stock (fast-check): every line whole, only from active,
 *    allowed locations with stock, never more than is there, priority order, fewest locations;
 *    a refusal names the short line whose SKU is first in byte order, with what the allowed
 *    locations hold; and the same answers as a small reference written here from the contract;
 * 2. hand-made cases: a split, a whole order from one location, fallback, safety stock, inactive,
 *    locationIds;
 * 3. tcc_try_batch on random batches decides exactly as tcc_allocate applied to its orders one by
 *    one in arrival order (its set-based paths included).
 */
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

type Strategy = 'priority' | 'fewest-locations';

interface StockRow {
  sku: string;
  location: string;
  priority: number;
  active: boolean;
  available: number;
}

interface Line {
  sku: string;
  quantity: number;
}

interface Allocation {
  line: number;
  location: string | null;
  quantity: number;
}

async function allocate(strategy: Strategy, lines: Line[], stock: StockRow[], allowed: string[] | null): Promise<Allocation[]> {
  const rows = await db.query<{ line: number; location_id: string | null; quantity: number }>(
    `SELECT line, location_id, quantity FROM tcc_allocate($1, $2::text[], $3::int[], $4::text[], $5::text[], $6::int[], $7::boolean[], $8::int[], $9::text[])`,
    [
      strategy,
      lines.map((l) => l.sku),
      lines.map((l) => l.quantity),
      stock.map((s) => s.sku),
      stock.map((s) => s.location),
      stock.map((s) => s.priority),
      stock.map((s) => s.active),
      stock.map((s) => s.available),
      allowed,
    ],
  );
  return rows.map((r) => ({ line: r.line, location: r.location_id, quantity: r.quantity }));
}

const byteOrder = (a: string, b: string) => (Buffer.from(a) < Buffer.from(b) ? -1 : Buffer.from(a) > Buffer.from(b) ? 1 : 0);

/** The contract's rules, written again as plainly as possible: the reference tcc_allocate must match. */
function reference(strategy: Strategy, lines: Line[], stock: StockRow[], allowed: string[] | null): Allocation[] {
  const candidates = stock
    .filter((s) => s.active && s.available > 0 && (allowed === null || allowed.includes(s.location)))
    .sort((a, b) => a.priority - b.priority || byteOrder(a.location, b.location));
  const supply = (sku: string) => candidates.filter((c) => c.sku === sku).reduce((n, c) => n + c.available, 0);
  const short = lines
    .map((l, i) => ({ ...l, line: i + 1 }))
    .filter((l) => supply(l.sku) < l.quantity)
    .sort((a, b) => byteOrder(a.sku, b.sku))[0];
  if (short) return [{ line: short.line, location: null, quantity: supply(short.sku) }];
  if (strategy === 'fewest-locations') {
    const locations = [...new Map(candidates.map((c) => [c.location, c])).values()];
    const whole = locations.find((loc) => lines.every((l) => candidates.some((c) => c.location === loc.location && c.sku === l.sku && c.available >= l.quantity)));
    if (whole) return lines.map((l, i) => ({ line: i + 1, location: whole.location, quantity: l.quantity }));
  }
  const out: Allocation[] = [];
  lines.forEach((l, i) => {
    let left = l.quantity;
    for (const c of candidates.filter((c) => c.sku === l.sku)) {
      if (left === 0) break;
      const take = Math.min(left, c.available);
      out.push({ line: i + 1, location: c.location, quantity: take });
      left -= take;
    }
  });
  return out;
}

const LOCATIONS = ['default', 'north', 'South', 'store-1', 'w_2'];
const SKUS = ['A', 'B', 'a', 'C-1'];

const world = fc
  .record({
    priorities: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: LOCATIONS.length, maxLength: LOCATIONS.length }),
    inactive: fc.subarray(LOCATIONS),
    rows: fc.array(
      fc.record({ sku: fc.constantFrom(...SKUS), location: fc.constantFrom(...LOCATIONS), available: fc.integer({ min: -3, max: 9 }) }),
      { maxLength: 14 },
    ),
    lines: fc.uniqueArray(fc.record({ sku: fc.constantFrom(...SKUS, 'UNSTOCKED'), quantity: fc.integer({ min: 1, max: 14 }) }), {
      minLength: 1,
      maxLength: 4,
      selector: (l) => l.sku,
    }),
    allowed: fc.option(fc.subarray([...LOCATIONS, 'elsewhere'], { minLength: 1 }), { nil: null }),
    strategy: fc.constantFrom<Strategy>('priority', 'fewest-locations'),
  })
  .map((w) => {
    const seen = new Set<string>();
    const stock: StockRow[] = [];
    for (const r of w.rows) {
      if (seen.has(`${r.sku}@${r.location}`)) continue;
      seen.add(`${r.sku}@${r.location}`);
      const i = LOCATIONS.indexOf(r.location);
      stock.push({ ...r, priority: w.priorities[i], active: !w.inactive.includes(r.location) });
    }
    return { stock, lines: w.lines, allowed: w.allowed, strategy: w.strategy };
  });

describe('tcc_allocate, the strategy', () => {
  it('holds its properties on random stock and matches the contract written plainly', async () => {
    await fc.assert(
      fc.asyncProperty(world, async ({ stock, lines, allowed, strategy }) => {
        const got = await allocate(strategy, lines, stock, allowed);
        expect(got).toEqual(reference(strategy, lines, stock, allowed));
        const eligible = (location: string, sku: string) =>
          stock.find((s) => s.sku === sku && s.location === location && s.active && s.available > 0 && (allowed === null || allowed.includes(location)));
        if (got.length === 1 && got[0].location === null) {
          // Refused: that line's SKU is short at the allowed locations, and nothing is allocated.
          const line = lines[got[0].line - 1];
          expect(got[0].quantity).toBeLessThan(line.quantity);
          return;
        }
        lines.forEach((l, i) => {
          const mine = got.filter((a) => a.line === i + 1);
          expect(mine.reduce((n, a) => n + a.quantity, 0)).toBe(l.quantity); // every line whole
          expect(new Set(mine.map((a) => a.location)).size).toBe(mine.length); // a location once per line
          for (const a of mine) {
            expect(a.quantity).toBeGreaterThan(0);
            const row = eligible(a.location!, l.sku);
            expect(row).toBeDefined(); // active, allowed, with stock there
            expect(a.quantity).toBeLessThanOrEqual(row!.available); // never more than is there
          }
        });
        if (strategy === 'fewest-locations') {
          // One location for the whole order whenever any can serve every line whole.
          const wholeExists = stock.some((s) => lines.every((l) => eligible(s.location, l.sku) && eligible(s.location, l.sku)!.available >= l.quantity));
          if (wholeExists) expect(new Set(got.map((a) => a.location)).size).toBe(1);
        }
      }),
      { numRuns: 400, seed: 20261126 },
    );
  });

  const stock = (rows: [string, string, number, number, boolean?][]): StockRow[] =>
    rows.map(([sku, location, priority, available, active]) => ({ sku, location, priority, available, active: active ?? true }));

  it('splits a line across locations in priority order, then by id', async () => {
    const s = stock([['A', 'default', 0, 2], ['A', 'zeta', 1, 5], ['A', 'alpha', 1, 1]]);
    expect(await allocate('priority', [{ sku: 'A', quantity: 6 }], s, null)).toEqual([
      { line: 1, location: 'default', quantity: 2 },
      { line: 1, location: 'alpha', quantity: 1 },
      { line: 1, location: 'zeta', quantity: 3 },
    ]);
  });

  it('fewest-locations takes the whole order from the first location that holds it all, else falls back to priority', async () => {
    const s = stock([['A', 'default', 0, 3], ['B', 'default', 0, 1], ['A', 'store', 1, 4], ['B', 'store', 1, 4], ['B', 'depot', 2, 9]]);
    const lines = [{ sku: 'A', quantity: 3 }, { sku: 'B', quantity: 2 }];
    expect(await allocate('fewest-locations', lines, s, null)).toEqual([
      { line: 1, location: 'store', quantity: 3 },
      { line: 2, location: 'store', quantity: 2 },
    ]);
    expect(await allocate('priority', lines, s, null)).toEqual([
      { line: 1, location: 'default', quantity: 3 },
      { line: 2, location: 'default', quantity: 1 },
      { line: 2, location: 'store', quantity: 1 },
    ]);
    // No one location holds both lines whole: as priority.
    const lines2 = [{ sku: 'A', quantity: 4 }, { sku: 'B', quantity: 6 }];
    expect(await allocate('fewest-locations', lines2, s, null)).toEqual(await allocate('priority', lines2, s, null));
  });

  it('never allocates safety stock, nor at inactive locations or outside locationIds', async () => {
    // available = on hand - reserved - safety stock: the caller passes it; 0 or below offers nothing.
    const s = stock([['A', 'default', 0, 0], ['A', 'closed', 1, 10, false], ['A', 'store', 2, 3], ['A', 'depot', 3, 5]]);
    expect(await allocate('priority', [{ sku: 'A', quantity: 4 }], s, null)).toEqual([
      { line: 1, location: 'store', quantity: 3 },
      { line: 1, location: 'depot', quantity: 1 },
    ]);
    expect(await allocate('priority', [{ sku: 'A', quantity: 4 }], s, ['store', 'closed'])).toEqual([{ line: 1, location: null, quantity: 3 }]);
    expect(await allocate('priority', [{ sku: 'A', quantity: 3 }], s, ['store'])).toEqual([{ line: 1, location: 'store', quantity: 3 }]);
  });

  it('refuses with the short line whose SKU is first in byte order and what the allowed locations hold', async () => {
    const s = stock([['b', 'default', 0, 1], ['B', 'default', 0, 2], ['a', 'store', 1, 1]]);
    const got = await allocate('priority', [{ sku: 'b', quantity: 5 }, { sku: 'B', quantity: 5 }, { sku: 'a', quantity: 1 }], s, null);
    expect(got).toEqual([{ line: 2, location: null, quantity: 2 }]); // 'B' < 'b' in byte order
  });
});

describe('tcc_try_batch, held to tcc_allocate', () => {
  const HOLDING = ['TRY_SUCCESS', 'CONFIRM_PENDING'];
  const tag = Math.random().toString(36).slice(2, 8);
  const locs = [
    { id: `L0-${tag}`, priority: 5 },
    { id: `L1-${tag}`, priority: 7 },
    { id: `L2-${tag}`, priority: 7 },
  ];
  const skus: string[] = [];
  let euro = '';

  interface Cell {
    onHand: number;
    reserved: number;
    safety: number;
  }
  interface Order {
    key: string;
    lines: Line[];
    locationIds: string[];
  }

  async function state(): Promise<Map<string, Cell>> {
    const rows = await db.query<{ sku: string; location_id: string; on_hand: number; reserved: number; safety_stock: number }>(
      `SELECT sku, location_id, on_hand, reserved, safety_stock FROM stock WHERE sku = ANY ($1::text[])`,
      [[...skus, euro]],
    );
    return new Map(rows.map((r) => [`${r.sku}@${r.location_id}`, { onHand: r.on_hand, reserved: r.reserved, safety: r.safety_stock }]));
  }

  async function activeOf(): Promise<Map<string, { priority: number; active: boolean }>> {
    const rows = await db.query<{ id: string; priority: number; active: boolean }>(`SELECT id, priority, active FROM locations`);
    return new Map(rows.map((r) => [r.id, r]));
  }

  function stockRows(cells: Map<string, Cell>, places: Map<string, { priority: number; active: boolean }>, lines: Line[]): StockRow[] {
    const out: StockRow[] = [];
    for (const [k, c] of cells) {
      const [sku, location] = k.split('@');
      if (!lines.some((l) => l.sku === sku)) continue;
      const p = places.get(location)!;
      out.push({ sku, location, priority: p.priority, active: p.active, available: c.onHand - c.reserved - c.safety });
    }
    return out;
  }

  it('decides each random batch as tcc_allocate would, one order after the other in arrival order', async () => {
    for (const l of locs) await db.query(`INSERT INTO locations (id, name, priority, active) VALUES ($1, $1, $2, true)`, [l.id, l.priority]);
    const next = rng(20261126);
    const int = (max: number) => Math.floor(next() * (max + 1));
    const paths = { fits: 0, loop: 0 };
    for (let round = 0; round < 250; round++) {
      // Fresh SKUs with a fresh stock picture: each at default and at some of the locations,
      // sometimes plenty; set through the service's own function (each set a ledger movement).
      const plenty = next() < 0.3;
      skus.splice(0, skus.length, ...[0, 1, 2, 3].map((j) => `S${j}-${tag}-${round}`));
      euro = `SE-${tag}-${round}`;
      await db.query(`INSERT INTO skus (sku, name, price_minor, currency) SELECT s, s, 100, c FROM unnest($1::text[], $2::text[]) AS t(s, c)`, [
        [...skus, euro],
        [...skus.map(() => 'USD'), 'EUR'],
      ]);
      // Every cell is a different (sku, location), so one statement sets them all, in this order.
      const sets: [string, string, number, number][] = [];
      for (const s of [...skus, euro]) {
        sets.push([s, 'default', plenty ? 40 + int(20) : int(6), int(3) === 0 ? int(2) : 0]);
        for (const l of locs) if (next() < 0.6) sets.push([s, l.id, plenty ? 40 : int(8), int(4) === 0 ? 1 : 0]);
      }
      const outcomes = await db.query<{ r_outcome: string }>(
        `SELECT x.r_outcome FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) WITH ORDINALITY AS t(sku, loc, on_hand, safety, n)
           CROSS JOIN LATERAL tcc_stock_set(t.sku, t.loc, t.on_hand, t.safety, NULL, 'system', NULL) x ORDER BY t.n`,
        [sets.map((c) => c[0]), sets.map((c) => c[1]), sets.map((c) => c[2]), sets.map((c) => c[3])],
      );
      expect(outcomes.map((o) => o.r_outcome)).toEqual(sets.map(() => 'ok'));
      const active = locs.map(() => next() > 0.15);
      await db.query(`UPDATE locations SET active = t.active FROM unnest($1::text[], $2::boolean[]) AS t(id, active) WHERE locations.id = t.id`, [locs.map((l) => l.id), active]);
      const strategy: Strategy = next() < 0.5 ? 'priority' : 'fewest-locations';
      const orders: Order[] = Array.from({ length: 1 + int(9) }, (_, i) => {
        const lines: Line[] = [];
        for (const s of [...skus, euro, `UNKNOWN-${tag}`]) if (next() < (s.startsWith('UNKNOWN') || s === euro ? 0.04 : 0.35)) lines.push({ sku: s, quantity: 1 + int(plenty ? 4 : 7) });
        if (lines.length === 0) lines.push({ sku: skus[int(3)], quantity: 1 + int(3) });
        const locationIds = next() < 0.25 ? [...new Set([locs[int(2)].id, ...(next() < 0.5 ? ['default'] : []), ...(next() < 0.05 ? [`nowhere-${tag}`] : [])])] : [];
        return { key: `k-${tag}-${round}-${i}`, lines, locationIds };
      });

      // What tcc_allocate says, order after order, on the state as the batch finds it.
      const before = await state();
      const places = await activeOf();
      const cells = new Map([...before].map(([k, c]) => [k, { ...c }]));
      const expected: unknown[] = [];
      for (const o of orders) {
        const allowed = o.locationIds.length ? o.locationIds : null;
        const unknownSku = o.lines.find((l) => l.sku.startsWith('UNKNOWN'));
        const unknownLocation = o.locationIds.filter((id) => !places.has(id)).sort(byteOrder)[0];
        const currencies = new Set(o.lines.filter((l) => !l.sku.startsWith('UNKNOWN')).map((l) => (l.sku === euro ? 'EUR' : 'USD')));
        if (unknownSku) expected.push({ outcome: 'UNKNOWN_SKU', sku: unknownSku.sku });
        else if (unknownLocation) expected.push({ outcome: 'UNKNOWN_LOCATION', location: unknownLocation });
        else if (currencies.size > 1) expected.push({ outcome: 'CURRENCY_MISMATCH' });
        else {
          // The judge first refuses, on the state before the batch, what does not fit even there.
          const judged = await allocate('priority', o.lines, stockRows(before, places, o.lines), allowed);
          const refused = judged.length === 1 && judged[0].location === null ? judged[0] : undefined;
          const got = refused ? [refused] : await allocate(strategy, o.lines, stockRows(cells, places, o.lines), allowed);
          if (got.length === 1 && got[0].location === null) {
            const line = o.lines[got[0].line - 1];
            expected.push({ outcome: 'INSUFFICIENT_STOCK', sku: line.sku, requested: line.quantity, available: got[0].quantity });
          } else {
            for (const a of got) cells.get(`${o.lines[a.line - 1].sku}@${a.location}`)!.reserved += a.quantity;
            expected.push({
              outcome: 'created',
              items: o.lines
                .map((l, i) => ({ sku: l.sku, allocations: got.filter((a) => a.line === i + 1).map((a) => ({ locationId: a.location, quantity: a.quantity })) }))
                .sort((a, b) => byteOrder(a.sku, b.sku)),
            });
          }
        }
      }

      const rows = await db.query<{ r_idx: number; r_outcome: string; r_body: string | null; r_sku: string | null; r_requested: number | null; r_available: number | null; r_location: string | null }>(
        `SELECT * FROM tcc_try_batch($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::int[], $8::text[], $9, 600000, 0, $10::text[], NULL) WHERE r_idx > 0 ORDER BY r_idx`,
        [
          orders.map((o) => o.key),
          orders.map((o) => `h-${o.key}`),
          orders.map(() => 'c-alloc'),
          orders.flatMap((o, i) => o.lines.map(() => i + 1)),
          orders.flatMap((o) => o.lines.map((l) => l.sku)),
          orders.flatMap((o) => o.lines.map((l) => l.quantity)),
          orders.flatMap((o, i) => o.locationIds.map(() => i + 1)),
          orders.flatMap((o) => o.locationIds),
          strategy,
          HOLDING,
        ],
      );
      const answered = rows.map((r) => {
        switch (r.r_outcome) {
          case 'created':
            return { outcome: 'created', items: (JSON.parse(r.r_body!).items as { sku: string; allocations: unknown[] }[]).map((i) => ({ sku: i.sku, allocations: i.allocations })) };
          case 'INSUFFICIENT_STOCK':
            return { outcome: r.r_outcome, sku: r.r_sku, requested: r.r_requested, available: r.r_available };
          case 'UNKNOWN_SKU':
            return { outcome: r.r_outcome, sku: r.r_sku };
          case 'UNKNOWN_LOCATION':
            return { outcome: r.r_outcome, location: r.r_location };
          default:
            return { outcome: r.r_outcome };
        }
      });
      expect({ round, strategy, answered }).toEqual({ round, strategy, answered: expected });
      // And the stock moved exactly by those allocations.
      expect(await state()).toEqual(cells);
      if (answered.every((a) => a.outcome === 'created') && answered.length > 1) paths.fits += 1;
      else paths.loop += 1;
    }
    // Both ways through the engine were taken many times.
    expect(paths.fits).toBeGreaterThan(20);
    expect(paths.loop).toBeGreaterThan(20);
    // 250 rounds of some twenty statements each, one after the other: 4-6 s alone, but up to a
    // minute beside the parallel files on two busy cores, so it has a budget of its own.
  }, 180_000);
});
