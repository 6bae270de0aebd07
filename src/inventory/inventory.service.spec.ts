import { AppError } from '../common/errors.js';
import type { Db, Statement } from '../database/db.js';
import { InventoryService } from './inventory.service.js';

/** A database that answers the stock statements from one row, and refuses an upsert the way Postgres's CHECK would. */
function db(row: Record<string, unknown> | undefined, upsert: () => Record<string, unknown>): Db {
  const answer = (stmt: Statement) => {
    if (stmt.name === 'stock_find') return row ? [row] : [];
    if (stmt.name === 'stock_upsert') return [upsert()];
    throw new Error(`unexpected statement ${stmt.name}`);
  };
  return { sql: { rows: async (s: Statement) => answer(s), one: async (s: Statement) => answer(s)[0] } } as unknown as Db;
}

const row = { sku: 'A-1', name: 'a thing', price_minor: '1250', currency: 'USD', on_hand: 10, reserved: 3 };

describe('InventoryService', () => {
  it('answers a SKU as the API shows it: the price as a number, what is available as on hand less reserved', async () => {
    const inventory = new InventoryService(db(row, () => row));
    await expect(inventory.get('A-1')).resolves.toEqual({ sku: 'A-1', name: 'a thing', priceMinor: 1250, currency: 'USD', onHand: 10, reserved: 3, available: 7 });
  });

  it('an unknown SKU is NOT_FOUND', async () => {
    await expect(new InventoryService(db(undefined, () => row)).get('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('an upsert that would put on hand below what is reserved is STOCK_BELOW_RESERVED, naming what is reserved now', async () => {
    const check = Object.assign(new Error('violates check constraint "skus_reserved_within_on_hand"'), { code: '23514' });
    const inventory = new InventoryService(
      db(row, () => {
        throw check;
      }),
    );
    const err = await inventory.upsert('A-1', { priceMinor: 1250, currency: 'USD', onHand: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'STOCK_BELOW_RESERVED', extra: { sku: 'A-1', reserved: 3 } });
    expect((err as Error).message).toBe('onHand 2 is below the 3 reserved now');
  });

  it('any other database error goes on as it is', async () => {
    const other = Object.assign(new Error('deadlock'), { code: '40P01' });
    const inventory = new InventoryService(
      db(row, () => {
        throw other;
      }),
    );
    await expect(inventory.upsert('A-1', { priceMinor: 1, currency: 'USD', onHand: 20 })).rejects.toBe(other);
  });
});
