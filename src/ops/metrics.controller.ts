import { Controller, Get, Header } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Gauge } from 'prom-client';
import { Db } from '../database/db.js';
import { JobScheduler } from '../jobs/job-scheduler.js';
import { ORDER_STATUSES } from '../orders/order-state.js';
import { PaymentGateway, BREAKER_STATE_VALUE } from '../payments/payment-gateway.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus text. Order series are read from Postgres at scrape time: equal on every process. */
@ApiTags('operations')
@Controller('metrics')
export class MetricsController {
  private readonly oldestHolding: Gauge;
  private readonly queueDepth: Gauge<'queue' | 'state'>;
  private readonly refundsPending: Gauge;

  constructor(
    private readonly metrics: MetricsService,
    private readonly db: Db,
    private readonly jobs: JobScheduler,
    gateway: PaymentGateway,
  ) {
    const registers = [metrics.registry];
    this.oldestHolding = new Gauge({
      name: 'tcc_oldest_holding_order_age_seconds',
      help: 'Age of the oldest order that holds stock (TRY_SUCCESS or CONFIRM_PENDING); 0 when none',
      registers,
    });
    this.queueDepth = new Gauge({ name: 'tcc_queue_jobs', help: 'BullMQ jobs by queue and state', labelNames: ['queue', 'state'], registers });
    this.refundsPending = new Gauge({ name: 'tcc_refunds_pending', help: 'Released orders still owed a refund check', registers });
    metrics.circuitState.set(BREAKER_STATE_VALUE[gateway.state]);
    gateway.onStateChange((s) => metrics.circuitState.set(BREAKER_STATE_VALUE[s]));
  }

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    const rows = await this.db.sql.rows<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM orders GROUP BY status`);
    for (const s of ORDER_STATUSES) this.metrics.ordersByStatus.set({ status: s }, rows.find((r) => r.status === s)?.n ?? 0);
    const [oldest] = await this.db.sql.rows<{ age: number | null; refunds: number }>(
      `SELECT (SELECT extract(epoch FROM now() - min(created_at))::float8 FROM orders
                WHERE status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')) AS age,
              (SELECT count(*)::int FROM orders WHERE refund_status = 'PENDING') AS refunds`,
    );
    this.oldestHolding.set(oldest?.age ?? 0);
    this.refundsPending.set(oldest?.refunds ?? 0);
    await Promise.all(
      Object.entries(this.jobs.queues).map(async ([name, q]) => {
        try {
          const counts = await q.getJobCounts('waiting', 'delayed', 'active', 'failed');
          for (const [state, n] of Object.entries(counts)) this.queueDepth.set({ queue: name, state }, n);
        } catch {
          // Redis away: keep the last known depth; /health reports the outage.
        }
      }),
    );
    return this.metrics.registry.metrics();
  }
}
