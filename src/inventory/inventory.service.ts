import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { Db, pgCode, PG } from '../database/db.js';
import type { InventoryView } from './inventory.types.js';
import { SkuRow, stockSql } from './stock.sql.js';

export interface SkuUpsert {
  name?: string;
  priceMinor: number;
  currency: string;
  onHand: number;
}

/**
 * Stock: SKUs, their price and on-hand counts. The TCC participant phases for outside
 * coordinators live in participant/; this service's own orders reserve through the group-commit
 * engine (orders/try/).
 */
@Injectable()
export class InventoryService {
  constructor(private readonly db: Db) {}

  async get(sku: string): Promise<InventoryView> {
    const [row] = await stockSql.find(this.db.sql, [sku]);
    if (!row) throw AppError.notFound(`SKU ${sku}`);
    return toView(row);
  }

  /** Creates or updates a SKU. Lowering on_hand below what is reserved now is refused. */
  async upsert(sku: string, input: SkuUpsert): Promise<InventoryView> {
    try {
      return toView(await stockSql.upsert(this.db.sql, sku, input));
    } catch (err) {
      if (pgCode(err) === PG.checkViolation) {
        const current = await stockSql.find(this.db.sql, [sku]);
        throw new AppError('STOCK_BELOW_RESERVED', `onHand ${input.onHand} is below the ${current[0]?.reserved ?? '?'} reserved now`, {
          sku,
          reserved: current[0]?.reserved,
        });
      }
      throw err;
    }
  }
}

function toView(row: SkuRow): InventoryView {
  return {
    sku: row.sku,
    name: row.name,
    priceMinor: Number(row.price_minor),
    currency: row.currency,
    onHand: row.on_hand,
    reserved: row.reserved,
    available: row.on_hand - row.reserved,
  };
}
