import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { UnknownReason } from '../payments/gateway.types.js';

export type ConfirmOutcomeLabel = 'success' | 'declined' | UnknownReason;

/** This process's Prometheus registry. Series about orders come from Postgres at scrape time. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly confirmAttempts = new Counter({
    name: 'tcc_confirm_attempts_total',
    help: 'Gateway charge attempts by outcome (this process)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly circuitState = new Gauge({
    name: 'tcc_payment_circuit_state',
    help: "This process's payment gateway breaker: 0 closed, 1 half-open, 2 open",
    registers: [this.registry],
  });

  readonly ordersByStatus = new Gauge({
    name: 'tcc_orders_by_status',
    help: 'Orders by status (from the database, the same on every process)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly confirmFailures = new Counter({
    name: 'tcc_confirm_failures_total',
    help: 'Orders that ended PAY_FAILED, by reason (declined, exhausted)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly reservationsExpired = new Counter({
    name: 'tcc_reservations_expired_total',
    help: 'Reservations resolved by their TTL, by result',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly refunds = new Counter({
    name: 'tcc_refunds_total',
    help: 'Compensating refunds by result',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly reconciliationFixes = new Counter({
    name: 'tcc_reconciliation_fixes_total',
    help: 'Reconciliation findings by kind (refund_issued, mismatch)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly needsAttention = new Counter({
    name: 'tcc_orders_need_attention_total',
    help: 'Times an order was flagged for a human (refund keeps failing, reconciliation mismatch)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'tcc_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.circuitState.set(0);
    for (const o of ['success', 'declined', 'timeout', 'error', 'circuit_open'] as const) this.confirmAttempts.inc({ outcome: o }, 0);
  }
}
