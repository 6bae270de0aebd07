import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import CircuitBreaker from 'opossum';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { GatewayHttp } from './gateway.http.js';
import {
  CaptureOutcome,
  ChargeOutcome,
  ChargeRequest,
  GatewayPayment,
  GatewayRefund,
  GatewayRejectedError,
  GatewayUnavailableError,
  VoidOutcome,
} from './gateway.types.js';

export type BreakerState = 'closed' | 'half_open' | 'open';
export const BREAKER_STATE_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

type Call = () => Promise<unknown>;
type Operation = 'charge' | 'authorize' | 'capture' | 'void' | 'lookup' | 'refund';

/** What a call that did not get a usable answer means: an unknown outcome, or the gateway refusing the request. */
function failureOf(err: unknown, latencyMs: number): { kind: 'refused'; status: number; detail: string; latencyMs: number } | { kind: 'unknown'; reason: 'timeout' | 'error' | 'circuit_open'; detail: string; latencyMs: number } {
  if (err instanceof GatewayUnavailableError) return { kind: 'unknown', reason: err.reason, detail: err.message, latencyMs };
  if (err instanceof GatewayRejectedError) return { kind: 'refused', status: err.status, detail: err.message, latencyMs };
  return { kind: 'unknown', reason: 'error', detail: (err as Error).message, latencyMs };
}

const statusOf = (body: unknown): string | undefined => (body as { status?: unknown } | null)?.status as string | undefined;

/**
 * Every gateway call goes through one opossum breaker. Only unknown outcomes (timeouts, 429, 5xx,
 * connection errors) count as failures: a decline is an answer, and a final refusal means our
 * request was wrong, not that the gateway is sick (errorFilter). An open breaker is reported as
 * an unknown outcome — the caller defers, it never cancels because of it.
 */
@Injectable()
export class PaymentGateway implements OnApplicationShutdown {
  private readonly logger = new Logger(PaymentGateway.name);
  private readonly http: GatewayHttp;
  private readonly breaker: CircuitBreaker<[Call], unknown>;
  private readonly listeners = new Set<(state: BreakerState) => void>();
  private readonly latencies = new Map<string, ReturnType<MetricsService['gatewayDuration']['labels']>>();

  constructor(
    config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    const env = config.env;
    this.http = new GatewayHttp(env.PAYMENT_GATEWAY_URL, env.PAYMENT_TIMEOUT_MS);
    this.breaker = new CircuitBreaker((call: Call) => call(), {
      timeout: false, // the HTTP client's AbortSignal bounds each call; opossum's timeout would abort nothing
      errorThresholdPercentage: env.BREAKER_ERROR_THRESHOLD_PERCENT,
      resetTimeout: env.BREAKER_RESET_TIMEOUT_MS,
      volumeThreshold: env.BREAKER_VOLUME_THRESHOLD,
      errorFilter: (err: unknown) => err instanceof GatewayRejectedError,
      // Latency percentiles come from our own histogram. opossum's would keep every call's latency
      // for the rolling window and, on each failure, concatenate and sort them all to decide
      // whether to open: a cost per failure that grows with the window's calls, just when the
      // gateway is failing. Its per-second snapshot did the same.
      rollingPercentilesEnabled: false,
      enableSnapshots: false,
    });
    const changed = (state: BreakerState) => {
      this.logger.warn({ breaker: state }, `payment gateway circuit breaker is now ${state}`);
      this.metrics.circuitState.set(BREAKER_STATE_VALUE[state]);
      for (const l of this.listeners) l(state);
    };
    this.breaker.on('open', () => changed('open'));
    this.breaker.on('halfOpen', () => changed('half_open'));
    this.breaker.on('close', () => changed('closed'));
  }

  get state(): BreakerState {
    return this.breaker.opened ? 'open' : this.breaker.halfOpen ? 'half_open' : 'closed';
  }

  onStateChange(listener: (state: BreakerState) => void): void {
    this.listeners.add(listener);
  }

  /** Charges with the order's stable idempotency key. Never throws: every failure is an outcome. */
  async charge(req: ChargeRequest): Promise<ChargeOutcome> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const body = { amountMinor: req.amountMinor, currency: req.currency, reference: req.reference, ...(req.paymentToken ? { paymentToken: req.paymentToken } : {}) };
      const answer = (await this.fire('charge', () => this.http.charge(body, req.idempotencyKey, req.requestId))) as { status: number; body: GatewayPayment };
      if (answer.status === 201 && answer.body?.status === 'succeeded') return { kind: 'succeeded', payment: answer.body, latencyMs: latency() };
      if (answer.status === 402) return { kind: 'declined', payment: answer.body, latencyMs: latency() };
      return { kind: 'unknown', reason: 'error', detail: `unexpected answer ${answer.status}`, latencyMs: latency() };
    } catch (err) {
      return failureOf(err, latency());
    }
  }

  /**
   * Authorizes the order's amount (`capture: false`) with its stable key: `succeeded` means the
   * money is held (the payment is `authorized`). Never throws: every failure is an outcome.
   */
  async authorize(req: ChargeRequest): Promise<ChargeOutcome> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const body = { amountMinor: req.amountMinor, currency: req.currency, reference: req.reference, ...(req.paymentToken ? { paymentToken: req.paymentToken } : {}) };
      const answer = (await this.fire('authorize', () => this.http.authorize(body, req.idempotencyKey, req.requestId))) as { status: number; body: GatewayPayment };
      if (answer.status === 201 && answer.body?.status === 'authorized') return { kind: 'succeeded', payment: answer.body, latencyMs: latency() };
      if (answer.status === 402) return { kind: 'declined', payment: answer.body, latencyMs: latency() };
      return { kind: 'unknown', reason: 'error', detail: `unexpected answer ${answer.status} ${String(statusOf(answer.body))}`, latencyMs: latency() };
    } catch (err) {
      return failureOf(err, latency());
    }
  }

  /** Captures an authorization (one key per order). A 409 expired or voided is `closed`: nothing was taken. */
  async capture(paymentId: string, amountMinor: number, idempotencyKey: string, requestId?: string): Promise<CaptureOutcome> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const answer = (await this.fire('capture', () => this.http.capture(paymentId, amountMinor, idempotencyKey, requestId))) as { status: number; body: GatewayPayment };
      const status = statusOf(answer.body);
      // A 409 succeeded: it was captured already (by this key's first answer being lost, it would replay 200).
      if (status === 'succeeded') return { kind: 'succeeded', payment: answer.body, latencyMs: latency() };
      if (answer.status === 409 && (status === 'expired' || status === 'voided')) return { kind: 'closed', payment: answer.body, latencyMs: latency() };
      return { kind: 'unknown', reason: 'error', detail: `unexpected answer ${answer.status} ${String(status)}`, latencyMs: latency() };
    } catch (err) {
      return failureOf(err, latency());
    }
  }

  /** Voids an authorization. The hold is gone when it is voided or expired; a captured one must be refunded. */
  async void(paymentId: string, idempotencyKey: string, requestId?: string): Promise<VoidOutcome> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const answer = (await this.fire('void', () => this.http.void(paymentId, idempotencyKey, requestId))) as { status: number; body: GatewayPayment };
      const status = statusOf(answer.body);
      if (status === 'succeeded') return { kind: 'captured', payment: answer.body, latencyMs: latency() };
      if (status === 'voided' || status === 'expired' || status === 'declined') return { kind: 'voided', payment: answer.body, latencyMs: latency() };
      return { kind: 'unknown', reason: 'error', detail: `unexpected answer ${answer.status} ${String(status)}`, latencyMs: latency() };
    } catch (err) {
      return failureOf(err, latency());
    }
  }

  /** Every payment the gateway holds for a reference (order id). Throws GatewayUnavailableError. */
  async lookup(reference: string, requestId?: string): Promise<GatewayPayment[]> {
    return (await this.fire('lookup', () => this.http.listByReference(reference, requestId))) as GatewayPayment[];
  }

  async refund(paymentId: string, amountMinor: number, idempotencyKey: string): Promise<GatewayRefund> {
    return (await this.fire('refund', () => this.http.refund(paymentId, amountMinor, idempotencyKey))) as GatewayRefund;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.http.close();
  }

  /** The latency series of an operation and outcome, looked up once (a bounded set). */
  private latency(operation: Operation, outcome: string): ReturnType<MetricsService['gatewayDuration']['labels']> {
    const name = `${operation} ${outcome}`;
    let series = this.latencies.get(name);
    if (!series) this.latencies.set(name, (series = this.metrics.gatewayDuration.labels(operation, outcome)));
    return series;
  }

  private async fire(operation: Operation, call: Call): Promise<unknown> {
    const started = performance.now();
    const end = (outcome: 'succeeded' | 'declined' | 'refused' | 'unknown') => this.latency(operation, outcome).observe((performance.now() - started) / 1000);
    try {
      const answer = await this.breaker.fire(call);
      const status = (answer as { status?: number; body?: { status?: string } })?.status;
      // A decline (402), or a capture or void the gateway answered no to (409): a definite answer.
      end(status === 402 || status === 409 ? 'declined' : 'succeeded');
      return answer;
    } catch (err) {
      // The breaker's timers are unref'd, so it is never shut down: work still running during a
      // shutdown must see the gateway as it is, not a breaker that refuses everything.
      if ((err as { code?: string })?.code === 'EOPENBREAKER') {
        end('unknown');
        throw new GatewayUnavailableError('circuit_open', 'payment gateway circuit breaker is open');
      }
      if (err instanceof GatewayRejectedError) {
        end('refused');
        this.metrics.gatewayRefusals.inc({ operation, status: String(err.status) });
      } else {
        end('unknown');
      }
      throw err;
    }
  }
}
