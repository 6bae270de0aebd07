import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { Db, Sql, unmappedOutcome } from '../database/db.js';
import { ledgerActor, type Actor } from '../http/actor.js';
import type { InventoryView } from './inventory.types.js';
import { SetStockRow, STOCK_SQL } from './stock.sql.js';
import { DEFAULT_LOCATION } from './locations/default-location.js';

export interface SkuUpsert {
  name?: string;
  priceMinor: number;
  currency: string;
  /** The stock of the location `default`. */
  onHand: number;
  lowStockThreshold?: number;
}

export interface StockSet {
  onHand: number;
  safetyStock?: number;
  /** Compare-and-set: the set happens only while on hand still equals this. */
  expectedOnHand?: number;
}

/**
 * Stock: SKUs, their price and their stock per location. Every change of on hand is a movement of
 * the ledger (written by the SQL functions it calls). The TCC participant phases for outside
 * coordinators live in participant/; this service's own orders reserve through the group-commit
 * engine (orders/try/).
 */
@Injectable()
export class InventoryService {
  constructor(private readonly db: Db) {}

  async get(sku: string): Promise<InventoryView> {
    // GET /inventory/{sku}: a read that decides no write, so the replica may answer it (database/replica-reads.ts).
    const view = await this.find(this.db.read, sku);
    if (!view) throw AppError.notFound(`SKU ${sku}`);
    return view;
  }

  /**
   * Creates or updates a SKU, and sets the stock of its location `default` (a `set` movement when
   * it changes). On hand below what is reserved there is refused, and nothing changes.
   */
  async upsert(sku: string, input: SkuUpsert, actor: Actor): Promise<InventoryView> {
    return this.db.tx(async (sql) => {
      await sql.exec(STOCK_SQL.upsertSku, [sku, input.name ?? null, input.priceMinor, input.currency, input.lowStockThreshold ?? null]);
      await this.setIn(sql, sku, DEFAULT_LOCATION, { onHand: input.onHand }, actor);
      return (await this.find(sql, sku))!;
    });
  }

  /** PUT /admin/inventory/{sku}/locations/{locationId}: the stock there, by compare-and-set with expectedOnHand. */
  async setStock(sku: string, locationId: string, input: StockSet, actor: Actor): Promise<InventoryView> {
    return this.db.tx(async (sql) => {
      await this.setIn(sql, sku, locationId, input, actor);
      return (await this.find(sql, sku))!;
    });
  }

  private async setIn(sql: Sql, sku: string, locationId: string, input: StockSet, actor: Actor): Promise<void> {
    const row = (await sql.one<SetStockRow>(STOCK_SQL.setStock, [
      sku,
      locationId,
      input.onHand,
      input.safetyStock ?? null,
      input.expectedOnHand ?? null,
      ledgerActor(actor),
      actor.operator,
    ]))!;
    switch (row.r_outcome) {
      case 'ok':
        return;
      case 'UNKNOWN_SKU':
        throw AppError.notFound(`SKU ${sku}`);
      case 'UNKNOWN_LOCATION':
        throw AppError.notFound(`location ${locationId}`);
      case 'STOCK_CHANGED':
        throw new AppError('STOCK_CHANGED', `onHand at ${locationId} is ${row.r_current}, not the ${input.expectedOnHand} expected`, {
          sku,
          locationId,
          current: row.r_current,
        });
      case 'STOCK_BELOW_RESERVED':
        throw new AppError('STOCK_BELOW_RESERVED', `onHand ${input.onHand} at ${locationId} is below the ${row.r_reserved} reserved there now`, {
          sku,
          locationId,
          reserved: row.r_reserved,
        });
      default:
        throw unmappedOutcome('tcc_stock_set', row.r_outcome);
    }
  }

  private async find(sql: Sql, sku: string): Promise<InventoryView | undefined> {
    const row = await sql.one<{ body: string | null }>(STOCK_SQL.inventory, [sku]);
    return row?.body ? (JSON.parse(row.body) as InventoryView) : undefined;
  }
}
