import { Injectable, Logger } from '@nestjs/common';
import { Db } from '../database/db.js';
import { ReservationExpiry } from './cancel/reservation-expiry.js';
import { ConfirmService } from './confirm/confirm.service.js';
import { HOLDING, PAYMENT_UNSETTLED, PaymentStatus } from './state/order-state.js';
import { ORDERS_SQL } from './state/orders.sql.js';
import { Authorizations } from './try/authorization.js';

const PAGE = 500;
const PARALLEL = 32;
/** A held payment whose capture was asked for: its expiry asks the gateway, like a charge's. */
const CAPTURE_ASKED: readonly PaymentStatus[] = ['capturing'];

interface DueRow {
  id: string;
  expired_unpaid: boolean;
  authorizing: boolean;
}

/**
 * Finds holding orders with something due (TTL passed, retry or lookup time came, a Confirm's
 * process died mid-call, an authorization to settle) and drives each through the same code a
 * client's Confirm (or Try) runs. The bucket jobs call it with no grace; the sweeper with a second
 * of grace, so jobs go first.
 */
@Injectable()
export class DueOrders {
  private readonly logger = new Logger(DueOrders.name);

  constructor(
    private readonly db: Db,
    private readonly confirm: ConfirmService,
    private readonly expiry: ReservationExpiry,
    private readonly authorizations: Authorizations,
  ) {}

  /**
   * Drives what is due now, page by page; returns how many orders it drove. A page with a failure
   * ends the run: an order that could not be driven stays due and would come back in the next
   * page, so going on could spin on the same orders; the next run (job or sweep) tries again.
   */
  async drive(graceMs: number, stopped: () => boolean = () => false): Promise<number> {
    let total = 0;
    for (;;) {
      const due = await this.db.sql.rows<DueRow>(ORDERS_SQL.due, [graceMs, PAGE, HOLDING, CAPTURE_ASKED, PAYMENT_UNSETTLED]);
      let failed = 0;
      let driven = 0;
      for (let i = 0; i < due.length && !stopped(); i += PARALLEL) {
        await Promise.all(
          due.slice(i, i + PARALLEL).map(async (row) => {
            try {
              await this.step(row);
              driven += 1;
            } catch (err) {
              failed += 1;
              this.logger.warn({ orderId: row.id, err: (err as Error).message }, 'could not drive a due order; it stays due');
            }
          }),
        );
      }
      total += driven;
      if (due.length < PAGE || failed > 0 || stopped()) return total;
    }
  }

  /** An unsettled authorization is settled first; a Confirm that waited for it then captures. */
  async settleAuthorization(id: string): Promise<void> {
    const r = await this.authorizations.settle(id);
    if (r?.status === 'CONFIRM_PENDING' && (JSON.parse(r.body) as { payment?: { status?: string } | null }).payment?.status === 'authorized') await this.confirm.advance(id);
  }

  private async step({ id, expired_unpaid, authorizing }: DueRow): Promise<unknown> {
    if (expired_unpaid) return this.expiry.expire(id);
    if (authorizing) return this.settleAuthorization(id);
    return this.confirm.advance(id);
  }

  /** Milliseconds until the first order due by `bucketEnd` that the database's clock does not see due yet. */
  async notYetDueIn(bucketEnd: number): Promise<number | undefined> {
    const row = await this.db.sql.one<{ in_ms: number | null }>(ORDERS_SQL.nextDueBefore, [new Date(bucketEnd), HOLDING]);
    return row?.in_ms === null || row?.in_ms === undefined ? undefined : Number(row.in_ms);
  }
}
