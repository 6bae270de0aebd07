import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { Db, pgCode, PG, Sql } from '../database/db.js';
import { barrier, BranchStatus } from './tcc-barrier.js';
import { ReservedLine, SkuRow, stockSql } from './stock.sql.js';

export interface LineRequest {
  sku: string;
  quantity: number;
}

export interface InventoryView {
  sku: string;
  name: string;
  priceMinor: number;
  currency: string;
  onHand: number;
  reserved: number;
  available: number;
}

export interface SkuUpsert {
  name?: string;
  priceMinor: number;
  currency: string;
  onHand: number;
}

/**
 * The inventory as a TCC participant for outside coordinators (/tcc/inventory/*). Each phase is
 * one local transaction guarded by the barrier. This service's own orders reserve through the
 * group-commit engine (orders/try-engine.ts), whose SQL keeps the same barrier rows and lock order.
 */
@Injectable()
export class InventoryService {
  constructor(private readonly db: Db) {}

  /**
   * Try: reserve every line or nothing. Lines are reserved in SKU byte order, like every other
   * path that locks SKU rows, so two multi-line branches can never deadlock. Throws (and so rolls
   * back, barrier row included) on the first refusal.
   */
  async try(sql: Sql, transactionId: string, lines: LineRequest[]): Promise<{ status: BranchStatus; lines: ReservedLine[] }> {
    if (!(await barrier.insert(sql, transactionId, 'try', 'try'))) {
      const status = await barrier.status(sql, transactionId);
      if (status === 'CANCELED') throw new AppError('TRANSACTION_CANCELED', `transaction ${transactionId} was canceled`);
      return { status: status ?? 'RESERVED', lines: [] };
    }
    const sorted = [...lines].sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
    checkSkus(await stockSql.find(sql, sorted.map((l) => l.sku)), sorted);
    await stockSql.recordReservation(sql, transactionId, sorted);
    const reserved: ReservedLine[] = [];
    for (const line of sorted) {
      const got = await stockSql.reserve(sql, line.sku, line.quantity);
      if (!got) {
        const available = (await stockSql.available(sql, line.sku)) ?? 0;
        throw new AppError('INSUFFICIENT_STOCK', `only ${available} of ${line.sku} available, ${line.quantity} requested`, {
          sku: line.sku,
          requested: line.quantity,
          available,
        });
      }
      reserved.push(got);
    }
    // The currency was read without a lock above; the locked rows are the truth.
    if (new Set(reserved.map((l) => l.currency)).size > 1) {
      throw new AppError('CURRENCY_MISMATCH', 'the order mixes SKUs priced in different currencies');
    }
    return { status: 'RESERVED', lines: reserved };
  }

  /** Confirm: the reservation becomes a sale. Repeats answer CONFIRMED and do nothing. */
  async confirm(sql: Sql, transactionId: string): Promise<BranchStatus> {
    const tryReason = await barrier.lockTry(sql, transactionId);
    if (!tryReason) throw new AppError('NO_RESERVATION', `transaction ${transactionId} has no reservation`);
    if (tryReason === 'cancel' || (await barrier.status(sql, transactionId)) === 'CANCELED') {
      throw new AppError('TRANSACTION_CANCELED', `transaction ${transactionId} was canceled`);
    }
    if (await barrier.insert(sql, transactionId, 'confirm', 'confirm')) {
      await stockSql.lockBranchSkus(sql, transactionId);
      await stockSql.commit(sql, transactionId);
    }
    return 'CONFIRMED';
  }

  /** Cancel: release what Try reserved; before any Try it is an empty rollback that fences Try off. */
  async cancel(sql: Sql, transactionId: string): Promise<BranchStatus> {
    await barrier.insert(sql, transactionId, 'try', 'cancel');
    const tryReason = await barrier.lockTry(sql, transactionId);
    // Under the lock, a Confirm either committed before us (refuse) or waits for us.
    const status = await barrier.status(sql, transactionId);
    if (status === 'CONFIRMED') throw new AppError('TRANSACTION_CONFIRMED', `transaction ${transactionId} was confirmed`);
    if (!(await barrier.insert(sql, transactionId, 'cancel', 'cancel'))) return 'CANCELED';
    if (tryReason === 'try') {
      await stockSql.lockBranchSkus(sql, transactionId);
      await stockSql.release(sql, transactionId);
    }
    return 'CANCELED';
  }

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

function checkSkus(found: SkuRow[], lines: LineRequest[]): void {
  const bySku = new Map(found.map((r) => [r.sku, r]));
  const unknown = lines.find((l) => !bySku.has(l.sku));
  if (unknown) throw new AppError('UNKNOWN_SKU', `SKU ${unknown.sku} does not exist`, { sku: unknown.sku });
  if (new Set(found.map((r) => r.currency)).size > 1) {
    throw new AppError('CURRENCY_MISMATCH', 'the order mixes SKUs priced in different currencies');
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
