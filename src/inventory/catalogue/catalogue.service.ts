import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import { SignedCursor } from '../../common/signed-cursor.js';
import { AppConfig } from '../../config/app-config.js';
import { Db } from '../../database/db.js';
import type { Actor } from '../../http/actor.js';
import { SKU_PATTERN } from '../../http/schemas.js';
import type { InventoryView } from '../inventory.types.js';
import type { CatalogueQuery } from './catalogue.schemas.js';
import { CATALOGUE_SQL, ImportOutcomeRow } from './catalogue.sql.js';
import { importColumnsOf, importRowsOf } from './import-input.js';

/**
 * The catalogue: every SKU as its inventory JSON, paged by sku, and the import that creates and
 * updates SKUs and their stock in bulk — all or nothing, one transaction, every on hand it changes
 * an `import` movement (catalogue/import.sql).
 */
@Injectable()
export class CatalogueService {
  private readonly cursors: SignedCursor;

  constructor(
    private readonly db: Db,
    config: AppConfig,
  ) {
    this.cursors = new SignedCursor(config.env.ADMIN_TOKEN ?? '', 'inventory-catalogue');
  }

  async list(q: CatalogueQuery): Promise<{ data: InventoryView[]; nextCursor: string | null }> {
    const limit = q.limit ? Number(q.limit) : 100;
    const after = q.cursor ? this.cursors.decode(q.cursor, 1, (v) => SKU_PATTERN.test(v[0]))[0] : null;
    const rows = await this.db.sql.rows<{ sku: string; body: string }>(CATALOGUE_SQL.page, [after, q.skuPrefix ?? null, q.locationId ?? null, q.lowStock === 'true', limit + 1]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map((r) => JSON.parse(r.body) as InventoryView), nextCursor: rows.length > limit && last ? this.cursors.encode([last.sku]) : null };
  }

  /** A JSON or CSV body (import-input.ts), checked whole before anything is written. */
  async import(raw: unknown, actor: Actor): Promise<{ created: number; updated: number }> {
    const c = importColumnsOf(importRowsOf(raw));
    const r = (await this.db.tx((sql) =>
      sql.one<ImportOutcomeRow>(CATALOGUE_SQL.import, [c.skus, c.names, c.prices, c.currencies, c.thresholds, c.locations, c.onHands, c.safetyStocks, actor.kind, actor.operator]),
    ))!;
    switch (r.r_outcome) {
      case 'ok':
        return { created: r.r_created!, updated: r.r_updated! };
      case 'VALIDATION_FAILED': {
        const field = `items[${r.r_row}].${r.r_field}`;
        const message = r.r_field === 'locationId' ? `location ${c.locations[r.r_row!]} does not exist` : `a new SKU needs ${r.r_field}`;
        throw AppError.validation([{ field, message }]);
      }
      case 'STOCK_BELOW_RESERVED':
        throw new AppError('STOCK_BELOW_RESERVED', `items[${r.r_row}]: onHand ${c.onHands[r.r_row!]} at ${r.r_location} is below what is reserved there now`, {
          sku: r.r_sku,
          locationId: r.r_location,
        });
    }
  }
}
