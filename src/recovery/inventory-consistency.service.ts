import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { PeriodicJobs } from '../database/periodic.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import { ledgerActor, type Actor } from '../http/actor.js';
import { HOLDING } from '../orders/state/order-state.js';
import { CONSISTENCY_SQL, ConsistencyRow } from './inventory-consistency.sql.js';

/** A stock row whose reserved is not what is held there, or whose on hand is not its ledger's sum. */
export interface StockMismatch {
  sku: string;
  locationId: string;
  reserved: number;
  held: number;
  onHand: number;
  ledger: number;
}

const mismatch = (r: ConsistencyRow): StockMismatch => ({
  sku: r.r_sku!,
  locationId: r.r_location!,
  reserved: r.r_reserved,
  held: r.r_held,
  onHand: r.r_on_hand,
  ledger: r.r_ledger,
});

/**
 * The inventory consistency check (API.md, "Consistency"): every stock row against what holding
 * orders and reserved outside branches hold there and against its ledger, on one snapshot, so
 * orders running meanwhile never show as a mismatch. The repair, under the SKU rows' locks, sets
 * reserved to what is held and records a `repair` movement where on hand and the ledger disagree
 * (on hand, the physical count, stands), with an audit entry naming who repaired and why, in the
 * same transaction. On workers the check runs every RECONCILE_INTERVAL_MS and leaves its count in
 * job_state, where /metrics reads it (tcc_inventory_mismatches) on every process.
 */
@Injectable()
export class InventoryConsistencyService implements OnApplicationBootstrap {
  private readonly logger = new Logger(InventoryConsistencyService.name);

  constructor(
    private readonly db: Db,
    private readonly periodic: PeriodicJobs,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers) return;
    this.periodic.register('inventory-consistency', this.config.env.RECONCILE_INTERVAL_MS, SESSION_LOCKS.inventoryConsistency, () => this.scheduled());
  }

  async check(): Promise<{ checked: number; mismatches: StockMismatch[] }> {
    const rows = await this.db.sql.rows<ConsistencyRow>(CONSISTENCY_SQL.check, [HOLDING]);
    const total = rows.find((r) => r.r_sku === null);
    const found = rows.filter((r) => r.r_sku !== null).map(mismatch);
    found.sort((a, b) => compare(a.sku, b.sku) || compare(a.locationId, b.locationId));
    return { checked: total?.r_reserved ?? 0, mismatches: found };
  }

  async repair(reason: string, actor: Actor): Promise<{ repaired: number; mismatches: StockMismatch[] }> {
    const { mismatches } = await this.check();
    if (mismatches.length === 0) return { repaired: 0, mismatches: [] };
    const skus = [...new Set(mismatches.map((m) => m.sku))];
    return this.db.tx(async (sql) => {
      const rows = await sql.rows<ConsistencyRow & { r_repaired: boolean }>(CONSISTENCY_SQL.repair, [skus, HOLDING, reason, ledgerActor(actor), actor.operator]);
      const found = rows.map(mismatch);
      const repaired = rows.filter((r) => r.r_repaired).length;
      await sql.exec(CONSISTENCY_SQL.audit, [actor.kind, actor.operator, reason, JSON.stringify({ repaired, mismatches: found })]);
      return { repaired, mismatches: found };
    });
  }

  private async scheduled(): Promise<void> {
    const { checked, mismatches } = await this.check();
    await this.db.sql.exec(CONSISTENCY_SQL.saveCount, [mismatches.length]);
    if (mismatches.length > 0) this.logger.warn({ checked, mismatches: mismatches.slice(0, 20) }, 'inventory mismatches found');
  }
}

/** Byte order, as the SQL sorts SKUs and locations (COLLATE "C"). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
