import { Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { ConfirmService } from '../orders/confirm.service.js';
import { RefundService } from '../orders/refund.service.js';

const SWEEP_LOCK = 0x7cc5_0001;
/** Jobs get the first chance; the sweeper takes what is overdue by more than this. */
const GRACE_MS = 1000;
const BATCH = 200;
const PARALLEL = 8;

/**
 * Postgres is the truth, Redis only schedules: every few seconds one sweeper (a session advisory
 * lock makes it one across all processes) finds orders whose TTL, retry, lookup or refund is
 * overdue — Redis lost its data, a process died between commit and enqueue, a job was dropped —
 * and drives them through the same code the jobs run.
 */
@Injectable()
export class Sweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Sweeper.name);
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly confirm: ConfirmService,
    private readonly refunds: RefundService,
    private readonly registry: SchedulerRegistry,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const timer = setInterval(() => {
      if (!this.running && !this.stopped) this.running = this.sweep().finally(() => (this.running = undefined));
    }, this.config.env.SWEEP_INTERVAL_MS);
    this.registry.addInterval('sweeper', timer);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.registry.doesExist('interval', 'sweeper')) this.registry.deleteInterval('sweeper');
    await this.running;
  }

  /** One pass; returns how many orders it drove. Public for tests and operators. */
  async sweep(): Promise<number> {
    const runner = this.db.dataSource.createQueryRunner();
    try {
      await runner.connect();
      const [{ locked }] = await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [SWEEP_LOCK]);
      if (!locked) return 0;
      try {
        return await this.drive();
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [SWEEP_LOCK]);
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'sweep failed; will try again');
      return 0;
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  private async drive(): Promise<number> {
    const due = await this.db.sql.rows<{ id: string; kind: 'advance' | 'refund' }>(
      `(SELECT id, 'advance' AS kind FROM orders
          WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')
            AND reservation_expires_at <= now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY reservation_expires_at LIMIT $2)
       UNION ALL
       (SELECT id, 'advance' FROM orders
          WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')
            AND next_action_at <= now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY next_action_at LIMIT $2)
       UNION ALL
       (SELECT id, 'refund' FROM orders
          WHERE refund_status = 'PENDING' AND refund_next_at <= now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY refund_next_at LIMIT $2)`,
      [GRACE_MS, BATCH],
    );
    const unique = [...new Map(due.map((d) => [`${d.kind}:${d.id}`, d])).values()];
    for (let i = 0; i < unique.length && !this.stopped; i += PARALLEL) {
      await Promise.all(
        unique.slice(i, i + PARALLEL).map(async ({ id, kind }) => {
          try {
            await (kind === 'refund' ? this.refunds.process(id) : this.confirm.advance(id));
          } catch (err) {
            this.logger.warn({ orderId: id, err: (err as Error).message }, 'sweeper could not drive order');
          }
        }),
      );
    }
    if (unique.length) this.logger.log({ driven: unique.length }, 'sweeper drove overdue orders');
    return unique.length;
  }
}
