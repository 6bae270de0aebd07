import type { Db, Sql, Statement } from '../database/db.js';
import { InventoryService } from './inventory.service.js';
import type { SetStockRow } from './stock.sql.js';

const view = {
  sku: 'A-1',
  name: 'a thing',
  priceMinor: 1250,
  currency: 'USD',
  onHand: 10,
  reserved: 3,
  safetyStock: 0,
  available: 7,
  lowStockThreshold: 0,
  locations: [{ locationId: 'default', onHand: 10, reserved: 3, safetyStock: 0, available: 7, active: true }],
};

/**
 * A database that answers the stock statements: the inventory JSON Postgres would build, and
 * tcc_stock_set's outcome as given. It records every statement with its parameters, and whether
 * a transaction ended in a commit or a rollback.
 */
function db(opts: { body?: unknown; set?: SetStockRow }) {
  const calls: { name: string; params: unknown[] }[] = [];
  const ends: string[] = [];
  const sql: Sql = {
    rows: async () => [],
    one: async <T>(s: Statement | string, params: unknown[] = []) => {
      const name = (s as Statement).name;
      calls.push({ name, params });
      if (name === 'stock_inventory') return { body: opts.body === undefined ? null : JSON.stringify(opts.body) } as T;
      if (name === 'stock_set') return (opts.set ?? { r_outcome: 'ok', r_current: 10, r_reserved: 3 }) as T;
      throw new Error(`unexpected statement ${name}`);
    },
    exec: async (s: Statement | string, params: unknown[] = []) => {
      calls.push({ name: (s as Statement).name, params });
      return 1;
    },
  };
  const fake = {
    sql,
    read: sql,
    tx: async <T>(work: (sql: Sql) => Promise<T>) => {
      try {
        const result = await work(sql);
        ends.push('commit');
        return result;
      } catch (err) {
        ends.push('rollback');
        throw err;
      }
    },
  } as unknown as Db;
  return { fake, calls, ends };
}

const admin = { kind: 'admin' as const, operator: null, principal: { type: 'root' as const, id: null, name: null } };
const console_ = { kind: 'console' as const, operator: 'Ana', principal: { type: 'operator' as const, id: 'op-1', name: 'Ana' } };

describe('InventoryService', () => {
  it('answers a SKU as Postgres builds it', async () => {
    await expect(new InventoryService(db({ body: view }).fake).get('A-1')).resolves.toEqual(view);
  });

  it('an unknown SKU is NOT_FOUND', async () => {
    await expect(new InventoryService(db({}).fake).get('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('an upsert writes the SKU row, then sets the stock of default through the ledger, as its actor, in one transaction', async () => {
    const { fake, calls, ends } = db({ body: view });
    await expect(new InventoryService(fake).upsert('A-1', { name: 'n', priceMinor: 1250, currency: 'USD', onHand: 10, lowStockThreshold: 2 }, console_)).resolves.toEqual(view);
    expect(calls.map((c) => c.name)).toEqual(['stock_upsert_sku', 'stock_set', 'stock_inventory']);
    expect(calls[0].params).toEqual(['A-1', 'n', 1250, 'USD', 2]);
    expect(calls[1].params).toEqual(['A-1', 'default', 10, null, null, '{"actor":"console","type":"operator","id":"op-1","name":"Ana"}', 'Ana']);
    expect(ends).toEqual(['commit']);
  });

  it('on hand below what is reserved is STOCK_BELOW_RESERVED naming the SKU and location, and the transaction rolls back', async () => {
    const { fake, ends } = db({ body: view, set: { r_outcome: 'STOCK_BELOW_RESERVED', r_current: 10, r_reserved: 3 } });
    const err = await new InventoryService(fake).upsert('A-1', { priceMinor: 1250, currency: 'USD', onHand: 2 }, admin).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STOCK_BELOW_RESERVED', extra: { sku: 'A-1', locationId: 'default', reserved: 3 } });
    expect((err as Error).message).toBe('onHand 2 at default is below the 3 reserved there now');
    expect(ends).toEqual(['rollback']);
  });

  it('a compare-and-set that no longer matches is STOCK_CHANGED with what on hand is now', async () => {
    const { fake } = db({ body: view, set: { r_outcome: 'STOCK_CHANGED', r_current: 8, r_reserved: 0 } });
    await expect(new InventoryService(fake).setStock('A-1', 'store', { onHand: 5, expectedOnHand: 9 }, admin)).rejects.toMatchObject({
      code: 'STOCK_CHANGED',
      extra: { sku: 'A-1', locationId: 'store', current: 8 },
    });
  });

  it.each([
    ['UNKNOWN_SKU', 'SKU A-1 not found'],
    ['UNKNOWN_LOCATION', 'location store not found'],
  ] as const)('%s is NOT_FOUND', async (outcome, message) => {
    const { fake } = db({ body: view, set: { r_outcome: outcome, r_current: null, r_reserved: null } });
    await expect(new InventoryService(fake).setStock('A-1', 'store', { onHand: 5 }, admin)).rejects.toMatchObject({ code: 'NOT_FOUND', message });
  });

  it('a set passes its safety stock and expected on hand on, and answers the inventory as it now is', async () => {
    const { fake, calls } = db({ body: view });
    await expect(new InventoryService(fake).setStock('A-1', 'store', { onHand: 5, safetyStock: 1, expectedOnHand: 4 }, admin)).resolves.toEqual(view);
    expect(calls[0]).toEqual({ name: 'stock_set', params: ['A-1', 'store', 5, 1, 4, '{"actor":"admin","type":"root","id":null,"name":null}', null] });
  });
});
