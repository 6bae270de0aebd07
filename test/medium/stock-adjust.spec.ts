import { Query, useRolledBack } from '../support/medium.js';

/**
 * tcc_stock_adjust (POST /admin/inventory/{sku}/adjustments) called as the service calls it, each
 * test in a transaction that is rolled back: every outcome it answers, the movement it writes, and
 * the ledger's deferred check (tcc_on_hand_recorded) that no on hand changes without a movement.
 */
const m = useRolledBack();

type Adjusted = { r_outcome: string; r_movement: string | null; r_reserved: number | null; r_inventory: string | null };

const adjust = (q: Query, sku: string, delta: number, opts: { location?: string; key?: string; hash?: string } = {}) =>
  q<Adjusted>(`SELECT * FROM tcc_stock_adjust($1, $2, $3, 'count', 'ref-1', 'admin', NULL, $4, $5)`, [
    sku,
    opts.location ?? 'default',
    delta,
    opts.key ?? null,
    opts.hash ?? null,
  ]).then((rows) => rows[0]);

const sku = async (q: Query, name: string) => {
  await q(`INSERT INTO skus (sku, price_minor, currency) VALUES ($1, 100, 'USD')`, [name]);
  return name;
};

it('adds to a location it had no row at: the row and one adjustment movement, with the on hand after it', () =>
  m.tx(async (q) => {
    const s = await sku(q, 'MED-ADJ');
    const first = await adjust(q, s, 5);
    expect(first.r_outcome).toBe('created');
    expect(JSON.parse(first.r_movement!)).toMatchObject({ sku: s, locationId: 'default', kind: 'adjustment', delta: 5, onHandAfter: 5, reason: 'count', reference: 'ref-1', actor: 'admin', operator: null });
    expect((await adjust(q, s, -2)).r_outcome).toBe('created');
    expect(await q(`SELECT on_hand, reserved FROM stock WHERE sku = $1`, [s])).toEqual([{ on_hand: 3, reserved: 0 }]);
    expect(await q(`SELECT delta, on_hand_after FROM stock_movements WHERE sku = $1 ORDER BY id`, [s])).toEqual([
      { delta: 5, on_hand_after: 5 },
      { delta: -2, on_hand_after: 3 },
    ]);
  }));

it('answers the first movement again for the same key and body, and IDEMPOTENCY_KEY_REUSED for another body', () =>
  m.tx(async (q) => {
    const s = await sku(q, 'MED-KEY');
    const first = await adjust(q, s, 4, { key: 'med-k1', hash: 'h1' });
    const again = await adjust(q, s, 4, { key: 'med-k1', hash: 'h1' });
    expect([again.r_outcome, again.r_movement]).toEqual(['replayed', first.r_movement]);
    expect((await adjust(q, s, 9, { key: 'med-k1', hash: 'h2' })).r_outcome).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await q(`SELECT on_hand FROM stock WHERE sku = $1`, [s])).toEqual([{ on_hand: 4 }]);
    // The answer's inventory is the first one's, text for text, after the stock moved on.
    expect(JSON.parse(first.r_inventory!)).toMatchObject({ sku: s, onHand: 4, reserved: 0 });
    expect((await adjust(q, s, 6)).r_outcome).toBe('created');
    const later = await adjust(q, s, 4, { key: 'med-k1', hash: 'h1' });
    expect([later.r_outcome, later.r_movement, later.r_inventory]).toEqual(['replayed', first.r_movement, first.r_inventory]);
    expect(JSON.parse((await adjust(q, s, 1)).r_inventory!)).toMatchObject({ onHand: 11 });
  }));

it('refuses an unknown SKU or location, and on hand below what is reserved, changing nothing', () =>
  m.tx(async (q) => {
    const s = await sku(q, 'MED-REFUSE');
    expect((await adjust(q, 'MED-NO-SUCH', 1)).r_outcome).toBe('UNKNOWN_SKU');
    expect((await adjust(q, s, 1, { location: 'no-such-location' })).r_outcome).toBe('UNKNOWN_LOCATION');
    expect((await adjust(q, s, 5)).r_outcome).toBe('created');
    await q(`UPDATE stock SET reserved = 3 WHERE sku = $1`, [s]);
    expect(await adjust(q, s, -3)).toEqual({ r_outcome: 'STOCK_BELOW_RESERVED', r_movement: null, r_reserved: 3, r_inventory: null });
    expect(await adjust(q, s, -9)).toEqual({ r_outcome: 'STOCK_BELOW_RESERVED', r_movement: null, r_reserved: 3, r_inventory: null });
    expect(await q(`SELECT on_hand, reserved FROM stock WHERE sku = $1`, [s])).toEqual([{ on_hand: 5, reserved: 3 }]);
    expect(await q(`SELECT count(*)::int AS n FROM stock_movements WHERE sku = $1`, [s])).toEqual([{ n: 1 }]);
  }));

it('the ledger refuses an on hand changed without its movement, at commit (here: SET CONSTRAINTS ALL IMMEDIATE)', async () => {
  await expect(
    m.tx(async (q) => {
      const s = await sku(q, 'MED-LEDGER');
      expect((await adjust(q, s, 5)).r_outcome).toBe('created');
      await q(`UPDATE stock SET on_hand = 7 WHERE sku = $1`, [s]);
    }),
  ).rejects.toThrow('on hand of MED-LEDGER at default is 7 but its ledger says 5');
});
