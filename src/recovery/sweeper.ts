import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import { ParticipantService } from '../inventory/participant/participant.service.js';
import { DueOrders } from '../orders/due-orders.js';
import { REFUND_OPEN } from '../orders/state/refund-state.js';
import { RefundService } from '../orders/cancel/refund.service.js';
import { PeriodicJobs } from '../database/periodic.js';
import { RECOVERY_SQL } from './recovery.sql.js';

/** Jobs get the first chance; the sweeper takes what is overdue by more than this. */
const GRACE_MS = 1000;
const PARALLEL = 8;

/**
 * Postgres is the truth, Redis only schedules: every SWEEP_INTERVAL_MS one sweeper across all
 * processes finds orders whose TTL, retry, lookup or refund is overdue — Redis lost its data, a
 * process died between commit and enqueue, a job was dropped — and drives them through the same
 * code the jobs run; it also cancels outside branches past their timeout.
 */
@Injectable()
export class Sweeper implements OnApplicationBootstrap {
  private readonly logger = new Logger(Sweeper.name);

  constructor(
    private readonly db: Db,
    private readonly due: DueOrders,
    private readonly refunds: RefundService,
    private readonly periodic: PeriodicJobs,
    private readonly participant: ParticipantService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.periodic.register('sweeper', this.config.env.SWEEP_INTERVAL_MS, SESSION_LOCKS.sweeper, () => this.sweep());
  }

  /** One pass (the caller holds the sweeper's lock); returns how many orders it drove. */
  async sweep(): Promise<number> {
    await this.db.sql.exec(RECOVERY_SQL.compactCounts);
    const driven = await this.due.drive(GRACE_MS, this.periodic.stopped);
    const branches = await this.participant.expireDue(this.periodic.stopped);
    if (branches) this.logger.log({ branches }, 'sweeper canceled outside branches past their timeout');
    const refunds = await this.db.sql.rows<{ id: string }>(RECOVERY_SQL.refundsDue, [GRACE_MS, 200, REFUND_OPEN]);
    for (let i = 0; i < refunds.length && !this.periodic.stopped(); i += PARALLEL) {
      await Promise.all(
        refunds.slice(i, i + PARALLEL).map(({ id }) =>
          this.refunds.process(id).catch((err: unknown) => this.logger.warn({ orderId: id, err: (err as Error).message }, 'sweeper could not run a refund round')),
        ),
      );
    }
    if (driven + refunds.length) this.logger.log({ driven, refunds: refunds.length }, 'sweeper drove overdue orders');
    return driven + refunds.length;
  }
}
