import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import { CURSOR_KEY_PURPOSE, SignedCursor } from '../../common/signed-cursor.js';
import { DeploymentKey } from '../../database/deployment-key.js';
import { Db, Sql } from '../../database/db.js';
import { ledgerActor, type Actor } from '../../http/actor.js';
import { SKU_PATTERN } from '../../http/schemas.js';
import type { InventoryView } from '../inventory.types.js';
import type { CatalogueQuery, ImportResult } from './catalogue.schemas.js';
import { CATALOGUE_SQL, ImportOutcomeRow } from './catalogue.sql.js';
import { ImportColumns, importColumnsOf, importRowsOf, withLines } from './import-input.js';
import { DEFAULT_LOCATION } from '../locations/default-location.js';

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
    deploymentKey: DeploymentKey,
  ) {
    this.cursors = new SignedCursor(deploymentKey.derive(CURSOR_KEY_PURPOSE), 'inventory-catalogue');
  }

  async list(q: CatalogueQuery): Promise<{ data: (InventoryView & { lowAt: string[] })[]; nextCursor: string | null }> {
    const limit = q.limit ? Number(q.limit) : 100;
    const after = q.cursor ? this.cursors.decode(q.cursor, 1, (v) => SKU_PATTERN.test(v[0]))[0] : null;
    const rows = await this.db.read.rows<{ sku: string; body: string; low_at: string[] }>(CATALOGUE_SQL.page, [
      after,
      q.skuPrefix ?? null,
      q.locationId ?? null,
      q.lowStock === 'true',
      limit + 1,
      q.lowAt ?? null,
      DEFAULT_LOCATION,
      q.lowAnywhere === 'true',
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map((r) => ({ ...(JSON.parse(r.body) as InventoryView), lowAt: r.low_at })),
      nextCursor: rows.length > limit && last ? this.cursors.encode([last.sku]) : null,
    };
  }

  /**
   * A JSON or CSV body (import-input.ts), checked whole before anything is written; a CSV's errors
   * also name the row's line. A refusal rolls the transaction back (the function may have created a
   * SKU before judging it), and so does a dry run, after the same judgement and the same counts.
   */
  async import(raw: unknown, actor: Actor, dryRun = false): Promise<ImportResult> {
    const { rows, lines } = importRowsOf(raw);
    let c: ImportColumns;
    try {
      c = importColumnsOf(rows);
    } catch (err) {
      throw withLines(err, lines);
    }
    const work = async (sql: Sql) => {
      const row = (await sql.one<ImportOutcomeRow>(CATALOGUE_SQL.import, [
        c.skus, c.names, c.prices, c.currencies, c.thresholds, c.locations, c.onHands, c.safetyStocks, ledgerActor(actor), actor.operator,
      ]))!;
      if (row.r_outcome !== 'ok') throw refusal(row, c, lines);
      return row;
    };
    const r = dryRun ? await this.db.rehearse(work) : await this.db.tx(work);
    return { created: r.r_created!, updated: r.r_updated!, unchanged: r.r_unchanged!, onHandDelta: r.r_on_hand_delta! };
  }
}

/** What the function refused, as the contract's error naming the row (and in a CSV its line). */
function refusal(r: ImportOutcomeRow, c: ImportColumns, lines: number[] | undefined): AppError {
  const line = lines?.[r.r_row!];
  if (r.r_outcome === 'VALIDATION_FAILED') {
    const field = `items[${r.r_row}].${r.r_field}`;
    const message = r.r_field === 'locationId' ? `location ${c.locations[r.r_row!]} does not exist` : `a new SKU needs ${r.r_field}`;
    return AppError.validation([{ field, message, ...(line ? { line } : {}) }]);
  }
  return new AppError('STOCK_BELOW_RESERVED', `items[${r.r_row}]${line ? ` (line ${line})` : ''}: onHand ${c.onHands[r.r_row!]} at ${r.r_location} is below what is reserved there now`, {
    sku: r.r_sku,
    locationId: r.r_location,
    ...(line ? { line } : {}),
  });
}
