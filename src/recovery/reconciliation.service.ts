import { Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { MetricsService } from '../ops/metrics.service.js';
import { OrderLifecycle } from '../orders/order-lifecycle.js';
import { OrdersRepository } from '../orders/orders.repository.js';
import { RefundService } from '../orders/refund.service.js';
import { netCaptured } from '../payments/gateway.types.js';
import { PaymentGateway } from '../payments/payment-gateway.js';

const RECONCILE_LOCK = 0x7cc5_0002;

export interface ReconciliationReport {
  since: string;
  checked: number;
  refunded: { orderId: string; netCapturedMinor: number }[];
  mismatches: { orderId: string; problem: string }[];
  unreachable: string[];
}

/**
 * Compares recently finished orders with the gateway's record, by reference:
 * - a CANCELED or PAY_FAILED order with money still captured is owed a refund (issued now, with
 *   the refund service's stable keys, so running this twice refunds once);
 * - a CONFIRM_SUCCESS order the gateway has no capture for (and no operator force-confirmed),
 *   or more than one capture for, needs a human: flagged on the timeline, in the metrics, and
 *   logged at error level.
 */
@Injectable()
export class ReconciliationService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ReconciliationService.name);
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly db: Db,
    private readonly orders: OrdersRepository,
    private readonly lifecycle: OrderLifecycle,
    private readonly refunds: RefundService,
    private readonly gateway: PaymentGateway,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
    @Optional() private readonly registry?: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers || !this.registry) return;
    const timer = setInterval(() => {
      this.running ??= this.scheduled().finally(() => (this.running = undefined));
    }, this.config.env.RECONCILE_INTERVAL_MS);
    this.registry.addInterval('reconciliation', timer);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.registry?.doesExist('interval', 'reconciliation')) this.registry.deleteInterval('reconciliation');
    await this.running;
  }

  /** One pass over orders finished in the last `sinceMs`, newest first (at most 1000 a pass). */
  async run(sinceMs: number): Promise<ReconciliationReport> {
    const since = new Date(Date.now() - sinceMs);
    const rows = await this.db.sql.rows<{ id: string; status: string; force_confirmed: boolean }>(
      `SELECT id, status, force_confirmed FROM orders
        WHERE status IN ('CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED') AND updated_at >= $1
        ORDER BY updated_at DESC LIMIT 1000`,
      [since],
    );
    const report: ReconciliationReport = { since: since.toISOString(), checked: 0, refunded: [], mismatches: [], unreachable: [] };
    for (const order of rows) {
      let payments;
      try {
        payments = await this.gateway.lookup(order.id);
      } catch {
        report.unreachable.push(order.id);
        continue;
      }
      report.checked += 1;
      const captured = payments.filter((p) => p.status === 'succeeded');
      const net = payments.reduce((sum, p) => sum + netCaptured(p), 0);
      if (order.status !== 'CONFIRM_SUCCESS' && net > 0) {
        report.refunded.push({ orderId: order.id, netCapturedMinor: net });
        this.metrics.reconciliationFixes.inc({ kind: 'refund_issued' });
        await this.db.tx((sql) => this.orders.owesRefund(sql, order.id, this.lifecycle.refundWatchMs, `reconciliation found ${net} captured on a ${order.status} order`));
        await this.refunds.process(order.id);
      } else if (order.status === 'CONFIRM_SUCCESS' && !order.force_confirmed && captured.length !== 1) {
        const problem = captured.length === 0 ? 'confirmed, but the gateway has no capture' : `confirmed, but the gateway has ${captured.length} captures`;
        report.mismatches.push({ orderId: order.id, problem });
        await this.flag(order.id, problem);
      }
    }
    return report;
  }

  private async flag(orderId: string, problem: string): Promise<void> {
    const [{ flagged }] = await this.db.sql.rows<{ flagged: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM order_events WHERE order_id = $1 AND type = 'reconciliation.mismatch') AS flagged`,
      [orderId],
    );
    if (flagged) return;
    await this.orders.addEvent(this.db.sql, orderId, 'reconciliation.mismatch', { problem });
    this.metrics.reconciliationFixes.inc({ kind: 'mismatch' });
    this.metrics.needsAttention.inc({ reason: 'reconciliation_mismatch' });
    this.logger.error({ orderId, problem, alert: 'reconciliation_mismatch' }, 'reconciliation mismatch: an operator should look at this order');
  }

  private async scheduled(): Promise<void> {
    const runner = this.db.dataSource.createQueryRunner();
    try {
      await runner.connect();
      const [{ locked }] = await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [RECONCILE_LOCK]);
      if (!locked) return;
      try {
        const report = await this.run(Math.max(3 * this.config.env.RECONCILE_INTERVAL_MS, 3_600_000));
        this.logger.log({ checked: report.checked, refunded: report.refunded.length, mismatches: report.mismatches.length }, 'reconciliation pass');
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [RECONCILE_LOCK]);
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'reconciliation pass failed');
    } finally {
      await runner.release().catch(() => undefined);
    }
  }
}
