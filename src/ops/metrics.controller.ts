import { Controller, Get, Header, Injectable } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Gauge } from 'prom-client';
import { Db } from '../database/db.js';
import { ApiErrors } from '../http/api-docs.js';
import { JobScheduler } from '../jobs/job-scheduler.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { HOLDING, ORDER_STATUSES } from '../orders/state/order-state.js';
import { REFUND } from '../orders/state/refund-state.js';
import { BREAKER_STATE_VALUE, PaymentGateway } from '../payments/payment-gateway.js';
import { METRICS_SQL } from './metrics.sql.js';

interface Scrape {
  by_status: Record<string, string>;
  needing_attention: string;
  oldest_holding: number | null;
  holding_overdue: number | null;
  refunds_pending: string;
  reconciled_at: number | null;
  oldest_branch: number | null;
  low_stock_skus: string;
  inventory_mismatches: number | null;
}

/**
 * Prometheus text. Order series are read from Postgres at scrape time — the same on every process
 * — through one cheap query; the rest are this process's counters. Served on the public port and
 * on OPS_PORT.
 */
@Injectable()
export class MetricsScraper {
  private readonly ordersByStatus: Gauge<'status'>;
  private readonly needingAttention: Gauge;
  private readonly oldestHolding: Gauge;
  private readonly holdingOverdue: Gauge;
  private readonly refundsPending: Gauge;
  private readonly reconciledAt: Gauge;
  private readonly oldestBranch: Gauge;
  private readonly queueDepth: Gauge<'queue' | 'state'>;
  private readonly queueOverdue: Gauge<'queue'>;
  private readonly lowStockSkus: Gauge;
  private readonly inventoryMismatches: Gauge;

  constructor(
    private readonly metrics: MetricsService,
    private readonly db: Db,
    private readonly jobs: JobScheduler,
    gateway: PaymentGateway,
  ) {
    this.ordersByStatus = metrics.gauge('tcc_orders_by_status', 'Orders by status (from the database, the same on every process)', ['status']);
    this.needingAttention = metrics.gauge('tcc_orders_needing_attention', 'Orders a human must look at until acknowledged (from the database)');
    this.oldestHolding = metrics.gauge('tcc_oldest_holding_order_age_seconds', 'Age of the oldest order that holds stock (TRY_SUCCESS or CONFIRM_PENDING); 0 when none');
    this.holdingOverdue = metrics.gauge(
      'tcc_holding_overdue_seconds',
      "How late the most overdue holding order's next step is (its expiry, a retry, a lookup or an expired lease): above a few seconds, expiry and retries are not running; 0 when none is due",
    );
    this.refundsPending = metrics.gauge('tcc_refunds_pending', 'Released orders still owed a refund check');
    this.reconciledAt = metrics.gauge('tcc_reconciliation_last_success_timestamp_seconds', 'When a scheduled reconciliation pass last completed with every order checked (0: never)');
    this.oldestBranch = metrics.gauge('tcc_participant_oldest_reserved_age_seconds', "Age of the oldest outside coordinator's branch still reserved; 0 when none");
    this.lowStockSkus = metrics.gauge('tcc_inventory_low_stock_skus', 'SKUs at or below their low-stock threshold, as last announced by inventory.low_stock (from the database)');
    this.inventoryMismatches = metrics.gauge(
      'tcc_inventory_mismatches',
      'Stock rows whose reserved is not what is held there or whose on hand is not the sum of its ledger, as the last scheduled consistency check found (from the database)',
    );
    this.queueDepth = metrics.gauge('tcc_queue_jobs', 'BullMQ jobs by queue and state', ['queue', 'state']);
    this.queueOverdue = metrics.gauge(
      'tcc_queue_overdue_seconds',
      "How long the queue's earliest delayed job has been due without a worker taking it (0 when none is due): above a few seconds, no worker is fetching from the queue",
      ['queue'],
    );
    metrics.circuitState.set(BREAKER_STATE_VALUE[gateway.state]);
  }

  async scrape(): Promise<string> {
    const row = await this.db.read.one<Scrape>(METRICS_SQL.scrape, [HOLDING, REFUND.pending, 'RESERVED']);
    if (row) {
      for (const s of ORDER_STATUSES) this.ordersByStatus.set({ status: s }, Number(row.by_status[s] ?? 0));
      this.needingAttention.set(Number(row.needing_attention));
      this.oldestHolding.set(Number(row.oldest_holding ?? 0));
      this.holdingOverdue.set(Number(row.holding_overdue ?? 0));
      this.refundsPending.set(Number(row.refunds_pending));
      this.reconciledAt.set(Number(row.reconciled_at ?? 0));
      this.oldestBranch.set(Number(row.oldest_branch ?? 0));
      this.lowStockSkus.set(Number(row.low_stock_skus));
      this.inventoryMismatches.set(Number(row.inventory_mismatches ?? 0));
    }
    await Promise.all(
      Object.entries(this.jobs.queues).map(async ([name, q]) => {
        try {
          const [counts, overdueS] = await Promise.all([q.getJobCounts('waiting', 'delayed', 'active', 'failed'), this.jobs.overdueSeconds(q)]);
          for (const [state, n] of Object.entries(counts)) this.queueDepth.set({ queue: name, state }, n);
          this.queueOverdue.set({ queue: name }, overdueS);
        } catch {
          // Redis away: keep the last known depth; /health reports the outage.
        }
      }),
    );
    return this.metrics.registry.metrics();
  }
}

@ApiTags('operations')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly scraper: MetricsScraper) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({ operationId: 'metrics', summary: 'Prometheus metrics' })
  @ApiResponse({ status: 200, description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } })
  @ApiErrors()
  scrape(): Promise<string> {
    return this.scraper.scrape();
  }
}
