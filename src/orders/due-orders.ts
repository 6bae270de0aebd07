import { Injectable, Logger } from '@nestjs/common';
import { Db } from '../database/db.js';
import { ReservationExpiry } from './cancel/reservation-expiry.js';
import { ConfirmService } from './confirm/confirm.service.js';
import { HOLDING } from './state/order-state.js';
import { ORDERS_SQL } from './state/orders.sql.js';

const PAGE = 500;
const PARALLEL = 32;

/**
 * Finds holding orders with something due (TTL passed, retry or lookup time came, a Confirm's
 * process died mid-call) and drives each through the same code a client's Confirm runs. The
 * bucket jobs call it with no grace; the sweeper with a second of grace, so jobs go first.
 */
@Injectable()
export class DueOrders {
  private readonly logger = new Logger(DueOrders.name);

  constructor(
    private readonly db: Db,
    private readonly confirm: ConfirmService,
    private readonly expiry: ReservationExpiry,
  ) {}

  /**
   * Drives what is due now, page by page; returns how many orders it drove. A page with a failure
   * ends the run: an order that could not be driven stays due and would come back in the next
   * page, so going on could spin on the same orders; the next run (job or sweep) tries again.
   */
  async drive(graceMs: number, stopped: () => boolean = () => false): Promise<number> {
    let total = 0;
    for (;;) {
      const due = await this.db.sql.rows<{ id: string; expired_unpaid: boolean }>(ORDERS_SQL.due, [graceMs, PAGE, HOLDING]);
      let failed = 0;
      let driven = 0;
      for (let i = 0; i < due.length && !stopped(); i += PARALLEL) {
        await Promise.all(
          due.slice(i, i + PARALLEL).map(async ({ id, expired_unpaid }) => {
            try {
              await (expired_unpaid ? this.expiry.expire(id) : this.confirm.advance(id));
              driven += 1;
            } catch (err) {
              failed += 1;
              this.logger.warn({ orderId: id, err: (err as Error).message }, 'could not drive a due order; it stays due');
            }
          }),
        );
      }
      total += driven;
      if (due.length < PAGE || failed > 0 || stopped()) return total;
    }
  }

  /** Milliseconds until the first order due by `bucketEnd` that the database's clock does not see due yet. */
  async notYetDueIn(bucketEnd: number): Promise<number | undefined> {
    const row = await this.db.sql.one<{ in_ms: number | null }>(ORDERS_SQL.nextDueBefore, [new Date(bucketEnd), HOLDING]);
    return row?.in_ms === null || row?.in_ms === undefined ? undefined : Number(row.in_ms);
  }
}
