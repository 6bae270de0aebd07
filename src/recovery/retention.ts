import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import { LABELS, MetricsService } from '../metrics/metrics.service.js';
import { TERMINAL } from '../orders/state/order-state.js';
import { REFUND } from '../orders/state/refund-state.js';
import { FINISHED_DELIVERIES } from '../webhooks/delivery-state.js';
import { PeriodicJobs } from '../database/periodic.js';
import { RETENTION_SQL } from './retention.sql.js';

/** Rows per statement: each is its own short transaction, so locks and WAL come in small pieces. */
const BATCH = 500;
/** The most one run spends; what is left waits for the next interval. */
const BUDGET_MS = 30_000;
/** Before the first order: orders_created is walked from its start with a cursor. */
const START = { createdAt: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

export type RetentionKind = (typeof LABELS.retentionKind)[number];
export type RetentionCounts = Record<RetentionKind, number>;

/** What one batch of the orders pass answers. */
export interface OrdersBatch {
  scanned: number;
  orders: number;
  events: number;
  barrier_rows: number;
  last_created_at: string | null;
  last_id: string | null;
}

/**
 * Deletes what is older than RETENTION_DAYS by the database's clock, in small batches, one process
 * at a time: finished orders (with their timeline and barrier rows; their Idempotency-Key goes
 * with the row, so a replay after that makes a new order), outside coordinators' finished branches
 * (barrier rows, reservations and the branch row), finished webhook deliveries and audit entries. Never an order that holds
 * stock, one whose refund is still open or one needing attention, never a branch still reserved.
 * RETENTION_DAYS=0 keeps everything: the job is not even registered.
 */
@Injectable()
export class Retention implements OnApplicationBootstrap {
  private readonly logger = new Logger(Retention.name);

  constructor(
    private readonly db: Db,
    private readonly periodic: PeriodicJobs,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    const { RETENTION_DAYS: days, RETENTION_INTERVAL_MS: everyMs } = this.config.env;
    if (days === 0) {
      this.logger.log('retention is off (RETENTION_DAYS=0): nothing is deleted');
      return;
    }
    this.periodic.register('retention', everyMs, SESSION_LOCKS.retention, () => this.run(days));
  }

  /**
   * One run (the caller holds the retention lock): the four kinds take turns, a batch each, until
   * each is done, the budget is spent or the process stops. Logs one line with what it deleted.
   */
  async run(days: number): Promise<RetentionCounts> {
    const started = Date.now();
    const counts: RetentionCounts = { orders: 0, order_events: 0, barrier_rows: 0, reservations: 0, branches: 0, webhook_deliveries: 0, audit_log: 0 };
    let cursor = START;
    const passes: (() => Promise<boolean>)[] = [
      async () => {
        const b = (await this.db.sql.one<OrdersBatch>(RETENTION_SQL.orders, [days, cursor.createdAt, cursor.id, BATCH, TERMINAL, REFUND.done]))!;
        this.add(counts, { orders: b.orders, order_events: b.events, barrier_rows: b.barrier_rows });
        if (b.scanned < BATCH || !b.last_created_at || !b.last_id) return false;
        cursor = { createdAt: b.last_created_at, id: b.last_id };
        return true;
      },
      async () => {
        const b = (await this.db.sql.one<{ branches: number; branch_rows: number; barrier_rows: number; reservations: number }>(RETENTION_SQL.branches, [days, BATCH]))!;
        this.add(counts, { barrier_rows: b.barrier_rows, reservations: b.reservations, branches: b.branch_rows });
        return b.branches >= BATCH;
      },
      async () => {
        const n = await this.db.sql.exec(RETENTION_SQL.deliveries, [FINISHED_DELIVERIES, days, BATCH]);
        this.add(counts, { webhook_deliveries: n });
        return n >= BATCH;
      },
      async () => {
        const n = await this.db.sql.exec(RETENTION_SQL.audit, [days, BATCH]);
        this.add(counts, { audit_log: n });
        return n >= BATCH;
      },
    ];
    const goOn = () => !this.periodic.stopped() && Date.now() - started < BUDGET_MS;
    let open = passes;
    while (open.length > 0 && goOn()) {
      const still: typeof passes = [];
      for (const pass of open) {
        if (!goOn() || (await pass())) still.push(pass);
      }
      open = still;
    }
    const complete = open.length === 0;
    this.logger.log({ ...counts, retentionDays: days, complete, ms: Date.now() - started }, `retention deleted rows older than ${days} days`);
    return counts;
  }

  private add(counts: RetentionCounts, batch: Partial<RetentionCounts>): void {
    for (const [kind, n] of Object.entries(batch) as [RetentionKind, number][]) {
      if (!n) continue;
      counts[kind] += n;
      this.metrics.retentionDeleted.inc({ kind }, n);
    }
  }
}
