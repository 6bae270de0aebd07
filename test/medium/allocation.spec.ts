import { useRolledBack } from '../support/medium.js';
import { rng } from '../support/rng.js';

/**
 * Allocation is defined in inventory/allocation/ alone: tcc_allocate (one order) and, for a batch
 * that fits what is there, tcc_allocate_in_turn (set-based, the Try engine's common case). Here the
 * second is held to the first on random batches: whenever it says a batch fits, its allocations
 * are exactly what tcc_allocate gives one order after the other, in arrival order, each against
 * what the orders before it took — under both strategies, with several locations per SKU, an
 * inactive location, empty rows and SKUs without stock.
 */
const world = useRolledBack();

const LOCATIONS = [
  { id: 'b-store', priority: 0, active: true },
  { id: 'a-depot', priority: 1, active: true },
  { id: 'c-closed', priority: 1, active: false },
  { id: 'd-far', priority: 5, active: true },
];

interface Row {
  sku: number;
  location: string;
  priority: number;
  active: boolean;
  free: number;
}

interface Batch {
  strategy: 'priority' | 'fewest-locations';
  skus: string[];
  rows: Row[];
  orders: { sku: number; quantity: number }[][];
}

function randomBatch(next: () => number): Batch {
  const pick = (n: number) => Math.floor(next() * n);
  const skus = Array.from({ length: 1 + pick(4) }, (_, i) => `S${i}`);
  const rows: Row[] = [];
  skus.forEach((_, k) => {
    for (const l of LOCATIONS) {
      if (next() < 0.35) continue;
      rows.push({ sku: k, location: l.id, priority: l.priority, active: l.active, free: l.active ? pick(8) : 0 });
    }
  });
  // Grouped by SKU, each group in allocation order: location priority, then id.
  rows.sort((x, y) => x.sku - y.sku || x.priority - y.priority || (x.location < y.location ? -1 : 1));
  const orders = Array.from({ length: 1 + pick(6) }, () => {
    const chosen = skus.map((_, k) => k).filter(() => next() < 0.6);
    return (chosen.length ? chosen : [pick(skus.length)]).map((sku) => ({ sku, quantity: 1 + pick(4) }));
  });
  return { strategy: next() < 0.5 ? 'priority' : 'fewest-locations', skus, rows, orders };
}

type Allocation = [order: number, sku: string, location: string, quantity: number];

it('tcc_allocate_in_turn allocates a batch that fits exactly as tcc_allocate does one order after the other', async () => {
  const next = rng(20261129);
  let fitted = 0;
  let refused = 0;
  await world.tx(async (q) => {
    for (let round = 0; round < 300; round++) {
      const b = randomBatch(next);
      const lineOrder = b.orders.flatMap((o, i) => o.map(() => i + 1));
      const lineSku = b.orders.flatMap((o) => o.map((l) => l.sku + 1));
      const lineQuantity = b.orders.flatMap((o) => o.map((l) => l.quantity));
      const first = b.skus.map((_, k) => {
        const at = b.rows.findIndex((r) => r.sku === k);
        return at < 0 ? 1 : at + 1;
      });
      const count = b.skus.map((_, k) => b.rows.filter((r) => r.sku === k).length);
      const [set] = await q<{ r_fits: boolean | null; r_order: number[]; r_line: number[]; r_row: number[]; r_quantity: number[] }>(
        'SELECT * FROM tcc_allocate_in_turn($1, $2::int[], $3::int[], $4::int[], $5::int[], $6::int[], $7::int[], $8::text[], $9::int[])',
        [b.strategy, lineOrder, lineOrder.map((_, i) => i + 1), lineSku, lineQuantity, first, count, b.rows.map((r) => r.location), b.rows.map((r) => r.free)],
      );
      if (!set.r_fits) {
        expect(set.r_order).toEqual([]);
        refused++;
        continue;
      }
      fitted++;
      const together: Allocation[] = set.r_order.map((o, i) => [o, b.skus[lineSku[set.r_line[i] - 1] - 1], b.rows[set.r_row[i] - 1].location, set.r_quantity[i]]);

      // One after the other, each order against what the ones before it took.
      const taken = b.rows.map(() => 0);
      const inTurn: Allocation[] = [];
      for (const [i, order] of b.orders.entries()) {
        const candidates = b.rows.map((r, n) => ({ ...r, n })).filter((r) => order.some((l) => l.sku === r.sku));
        const got = await q<{ line: number; location_id: string | null; quantity: number }>(
          'SELECT * FROM tcc_allocate($1, $2::text[], $3::int[], $4::text[], $5::text[], $6::int[], $7::boolean[], $8::int[], NULL)',
          [
            b.strategy,
            order.map((l) => b.skus[l.sku]),
            order.map((l) => l.quantity),
            candidates.map((r) => b.skus[r.sku]),
            candidates.map((r) => r.location),
            candidates.map((r) => r.priority),
            candidates.map((r) => r.active),
            candidates.map((r) => r.free - taken[r.n]),
          ],
        );
        for (const a of got) {
          // A batch that fits never runs short.
          expect({ round, batch: b, order: i + 1, short: a.location_id === null }).toEqual({ round, batch: b, order: i + 1, short: false });
          const sku = order[a.line - 1].sku;
          taken[b.rows.findIndex((r) => r.sku === sku && r.location === a.location_id)] += a.quantity;
          inTurn.push([i + 1, b.skus[sku], a.location_id!, a.quantity]);
        }
      }
      expect({ round, batch: b, allocations: together }).toEqual({ round, batch: b, allocations: inTurn });
    }
  });
  // Both ways are exercised: batches that fit, and batches left to tcc_allocate.
  expect(fitted).toBeGreaterThan(50);
  expect(refused).toBeGreaterThan(50);
});
