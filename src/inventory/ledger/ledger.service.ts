import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import { requestHash } from '../../common/request-hash.js';
import { CURSOR_KEY_PURPOSE, SignedCursor } from '../../common/signed-cursor.js';
import { DeploymentKey } from '../../database/deployment-key.js';
import { Db, unmappedOutcome } from '../../database/db.js';
import { ledgerActor, type Actor } from '../../http/actor.js';
import type { InventoryView } from '../inventory.types.js';
import type { AdjustmentBody, MovementsQuery, MovementView } from './ledger.schemas.js';
import { AdjustRow, LEDGER_SQL } from './ledger.sql.js';
import { DEFAULT_LOCATION } from '../locations/default-location.js';

const MOVEMENT_ID = /^[1-9]\d{0,17}$/;

/**
 * The ledger over HTTP: a SKU's movements, newest first, and adjustments (a delta with a reason).
 * Every change of on hand is written by the SQL functions as one movement in the change's own
 * transaction (stock/, ledger/, catalogue/, consistency/), so reading the ledger is reading stock's history.
 */
@Injectable()
export class LedgerService {
  private readonly cursors: SignedCursor;

  constructor(
    private readonly db: Db,
    deploymentKey: DeploymentKey,
  ) {
    this.cursors = new SignedCursor(deploymentKey.derive(CURSOR_KEY_PURPOSE), 'inventory-movements');
  }

  async movements(sku: string, q: MovementsQuery): Promise<{ data: MovementView[]; nextCursor: string | null }> {
    const limit = q.limit ? Number(q.limit) : 100;
    const before = q.cursor ? this.cursors.decode(q.cursor, 1, (v) => MOVEMENT_ID.test(v[0]))[0] : null;
    if (!(await this.db.read.one(LEDGER_SQL.skuExists, [sku]))) throw AppError.notFound(`SKU ${sku}`);
    const rows = await this.db.read.rows<{ id: string; body: string }>(LEDGER_SQL.movements, [sku, q.locationId ?? null, q.kind ?? null, before, limit + 1]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map((r) => JSON.parse(r.body) as MovementView), nextCursor: rows.length > limit && last ? this.cursors.encode([last.id]) : null };
  }

  /**
   * Adds a delta to a location's on hand, atomically under the SKU row's lock: concurrent
   * adjustments and sales never lose an update. With an Idempotency-Key, the same request again
   * answers what the first did (its movement, and the inventory as it answered it, which
   * tcc_stock_adjust keeps on the movement) and changes nothing more.
   */
  async adjust(sku: string, body: AdjustmentBody, key: string | undefined, actor: Actor): Promise<{ movement: MovementView; inventory: InventoryView }> {
    const locationId = body.locationId ?? DEFAULT_LOCATION;
    // The request as the key is bound to it (keys are one namespace across SKUs, so the SKU is part
    // of it): a missing locationId is the same request as the default location.
    const hash = requestHash([sku, locationId, body.delta, body.reason, body.reference ?? null]);
    // One statement, one transaction: the function holds the key's lock until it commits.
    const row = (await this.db.sql.one<AdjustRow>(LEDGER_SQL.adjust, [sku, locationId, body.delta, body.reason, body.reference ?? null, ledgerActor(actor), actor.operator, key ?? null, key ? hash : null]))!;
    switch (row.r_outcome) {
      case 'created':
      case 'replayed':
        return { movement: JSON.parse(row.r_movement!) as MovementView, inventory: JSON.parse(row.r_inventory!) as InventoryView };
      case 'IDEMPOTENCY_KEY_REUSED':
        throw new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with a different request body');
      case 'UNKNOWN_SKU':
        throw AppError.notFound(`SKU ${sku}`);
      case 'UNKNOWN_LOCATION':
        throw AppError.notFound(`location ${locationId}`);
      case 'STOCK_BELOW_RESERVED':
        throw new AppError('STOCK_BELOW_RESERVED', `a delta of ${body.delta} at ${locationId} would leave onHand below the ${row.r_reserved} reserved there (or below 0)`, {
          sku,
          locationId,
          reserved: row.r_reserved,
        });
      case 'ON_HAND_ABOVE_MAX':
        throw AppError.validation([{ field: 'delta', message: `a delta of ${body.delta} at ${locationId} would take onHand above 1000000000, the most a location holds` }]);
      default:
        throw unmappedOutcome('tcc_stock_adjust', row.r_outcome);
    }
  }
}
