import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every known label value of every counter: each series exists, at 0, from start-up. */
export const LABELS = {
  confirmOutcome: ['success', 'declined', 'timeout', 'error', 'circuit_open'],
  confirmFailure: ['declined', 'refused', 'exhausted', 'expired'],
  expiryResult: ['canceled', 'confirmed'],
  refundResult: ['refunded', 'failed'],
  reconciliationKind: ['refund_issued', 'void_issued', 'capture_issued', 'mismatch'],
  attentionReason: ['refund_failing', 'void_failing', 'reconciliation_mismatch', 'capture_on_force_confirmed'],
  gatewayOperation: ['charge', 'authorize', 'capture', 'void', 'lookup', 'refund'],
  gatewayRefusalStatus: ['400', '401', '403', '404', '422'],
  webhookOutcome: ['delivered', 'retried', 'failed'],
  participantExpiry: ['canceled'],
  retentionKind: ['orders', 'order_events', 'barrier_rows', 'reservations', 'branches', 'webhook_deliveries', 'audit_log'],
  fastPathRoute: ['/orders', '/orders/:id/confirm'],
  engine: ['try', 'probe', 'claim', 'apply'],
} as const;

/** A charge attempt's outcome as tcc_confirm_attempts_total labels it; an unknown outcome is labelled by its reason. */
export type ConfirmOutcomeLabel = (typeof LABELS.confirmOutcome)[number];

/** A batcher's `onBatch` and `onRetry`: its engine's series, looked up once rather than per batch. */
export function engineSeries(metrics: MetricsService, engine: (typeof LABELS.engine)[number]): { onBatch: (size: number) => void; onRetry: () => void } {
  const sizes = metrics.batchSize.labels(engine);
  const retries = metrics.batchRetries.labels(engine);
  return { onBatch: (size) => sizes.observe(size), onRetry: () => retries.inc() };
}

/**
 * This process's Prometheus registry: a leaf service every module may use. Series about orders
 * come from Postgres at scrape time (ops/metrics), the same on every process.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly registers = [this.registry];

  readonly confirmAttempts = this.counter('tcc_confirm_attempts_total', 'Gateway charge attempts by outcome (this process)', 'outcome', LABELS.confirmOutcome);
  readonly confirmFailures = this.counter('tcc_confirm_failures_total', 'Orders that ended PAY_FAILED, by reason (declined, refused by the gateway, exhausted, expired: a held payment that could no longer be captured)', 'reason', LABELS.confirmFailure);
  readonly reservationsExpired = this.counter('tcc_reservations_expired_total', 'Reservations resolved by their TTL, by result', 'result', LABELS.expiryResult);
  readonly refunds = this.counter('tcc_refunds_total', 'Compensating refunds by result', 'result', LABELS.refundResult);
  readonly reconciliationFixes = this.counter('tcc_reconciliation_fixes_total', 'Reconciliation findings by kind (refund_issued, void_issued, capture_issued, mismatch)', 'kind', LABELS.reconciliationKind);
  readonly needsAttention = this.counter('tcc_orders_need_attention_total', 'Times an order was flagged for a human, by reason', 'reason', LABELS.attentionReason);
  readonly webhookDeliveries = this.counter('tcc_webhook_deliveries_total', 'Webhook delivery attempts by outcome (delivered, retried, failed)', 'outcome', LABELS.webhookOutcome);
  readonly participantExpired = this.counter('tcc_participant_branches_expired_total', 'Outside coordinators\' branches canceled by their timeout', 'result', LABELS.participantExpiry);
  readonly fastPathRequests = this.counter('tcc_http_fast_path_requests_total', 'Try and Confirm requests answered straight from node:http (http/fast-path.ts), by route', 'route', LABELS.fastPathRoute);
  readonly batchRetries = this.counter('tcc_batch_retries_total', 'Requests a group-commit engine sent again after the database was busy (a row held past the lock wait, a deadlock), by engine', 'engine', LABELS.engine);
  readonly retentionDeleted = this.counter('tcc_retention_deleted_total', 'Rows deleted by retention (older than RETENTION_DAYS), by kind', 'kind', LABELS.retentionKind);

  readonly gatewayRefusals = new Counter({
    name: 'tcc_gateway_refusals_total',
    help: 'Gateway answers that refused a request outright (400, 401, 403, 404, 422): a misconfigured key or a bug shows here',
    labelNames: ['operation', 'status'] as const,
    registers: this.registers,
  });

  readonly circuitState = new Gauge({
    name: 'tcc_payment_circuit_state',
    help: "This process's payment gateway breaker: 0 closed, 1 half-open, 2 open",
    registers: this.registers,
  });

  readonly gatewayDuration = new Histogram({
    name: 'tcc_gateway_request_duration_seconds',
    help: 'Gateway calls by operation (charge, authorize, capture, void, lookup, refund) and outcome (succeeded, declined, refused, unknown)',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: this.registers,
  });

  readonly httpDuration = new Histogram({
    name: 'tcc_http_request_duration_seconds',
    help: 'HTTP request latency by route template',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: this.registers,
  });

  readonly batchSize = new Histogram({
    name: 'tcc_batch_size',
    help: 'Requests per group-commit database call, by engine (try, probe, claim, apply)',
    labelNames: ['engine'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: this.registers,
  });

  constructor() {
    // Node's event-loop delay histogram (nodejs_eventloop_lag_p50_seconds and the like) samples
    // every 50 ms, not prom-client's default 10: its timer woke an idle process 100 times a
    // second, half of that process's CPU (BENCHMARKS.md, "An idle process").
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 50 });
    this.circuitState.set(0);
    for (const operation of LABELS.gatewayOperation) {
      for (const status of LABELS.gatewayRefusalStatus) this.gatewayRefusals.inc({ operation, status }, 0);
    }
  }

  /** A gauge registered here, for series computed at scrape time. */
  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge<L>({ name, help, labelNames: [...labelNames], registers: this.registers });
  }

  private counter<L extends string>(name: string, help: string, label: L, values: readonly string[]): Counter<L> {
    const c = new Counter<L>({ name, help, labelNames: [label], registers: this.registers });
    for (const v of values) c.inc({ [label]: v } as Record<L, string>, 0);
    return c;
  }
}
