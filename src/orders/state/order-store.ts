import { Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Batcher, BatcherOptions } from '../../common/batcher.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../common/uuid.js';
import { AppConfig } from '../../config/app-config.js';
import { BUSY_RETRY, Db, isolateFailure } from '../../database/db.js';
import { engineSeries, MetricsService } from '../../metrics/metrics.service.js';
import { Move, moveJson } from './moves.js';
import { HOLDING, OrderStatus, PaymentStatus, TERMINAL } from './order-state.js';
import { ORDERS_SQL } from './orders.sql.js';
import { REFUND, RefundStatus } from './refund-state.js';

/** An order as an answer: its status and its contract JSON, as Postgres wrote it. */
export interface OrderAnswer {
  status: OrderStatus;
  body: string;
}

export interface MoveResult {
  id: string;
  found: boolean;
  won: boolean;
  status: OrderStatus;
  previous: OrderStatus | null;
  refundStatus: RefundStatus | null;
  nextActionAt: Date | null;
  refundNextAt: Date | null;
  attempts: number;
  body: string;
}

export interface OrderState {
  id: string;
  status: OrderStatus;
  transaction_id: string;
  amount_minor: string;
  currency: string;
  payment_key: string;
  confirm_attempts: number;
  charge_requested: boolean;
  expired: boolean;
  leased: boolean;
  due: boolean;
  force_confirmed: boolean;
  refund_status: RefundStatus | null;
  refund_failures: number;
  needs_attention: boolean;
  /** The payment held at Try; null for an order paid at Confirm. */
  payment_status: PaymentStatus | null;
  body: string;
}

interface ApplyRow {
  r_idx: number;
  r_id: string;
  r_won: boolean;
  r_status: OrderStatus | null;
  r_previous: OrderStatus | null;
  r_refund_status: RefundStatus | null;
  r_next_action_at: Date | null;
  r_refund_next_at: Date | null;
  r_attempts: number | null;
  r_body: string | null;
  r_flagged: boolean;
}

/** Claims and moves batch alike: at most 64 a call, ORDER_BATCH_IN_FLIGHT calls at once, ORDER_BATCH_WINDOW_MS of wait for company. */
export function orderBatching(config: AppConfig): Pick<BatcherOptions<unknown, unknown>, 'maxBatch' | 'maxInFlight' | 'windowMs' | 'isolate' | 'retry'> {
  return { maxBatch: 64, maxInFlight: config.env.ORDER_BATCH_IN_FLIGHT, windowMs: config.env.ORDER_BATCH_WINDOW_MS, isolate: isolateFailure, retry: BUSY_RETRY };
}

/**
 * How long a claimed step (a gateway attempt, an expiry's lookup) may run before another process
 * may take the order again: two gateway timeouts and a margin (STEP_LEASE_MARGIN_MS, 5 s).
 */
export function stepLeaseMs(env: Pick<AppConfig['env'], 'PAYMENT_TIMEOUT_MS' | 'STEP_LEASE_MARGIN_MS'>): number {
  return env.PAYMENT_TIMEOUT_MS * 2 + env.STEP_LEASE_MARGIN_MS;
}

/**
 * An order's state: moves go through a group-commit batcher (one tcc_apply call for every move
 * that arrives together), reads go straight to the pool.
 */
@Injectable()
export class OrderStore {
  private readonly moves: Batcher<Move, MoveResult>;
  private readonly logger = new Logger(OrderStore.name);

  /** IDEMPOTENCY_WAIT_MS: how long a request awaits another step on its order (awaitStep). */
  private readonly waitMs: number;

  constructor(
    private readonly db: Db,
    config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    this.waitMs = config.env.IDEMPOTENCY_WAIT_MS;
    this.moves = new Batcher<Move, MoveResult>({
      ...orderBatching(config),
      keyOf: (m) => m.id,
      ...engineSeries(metrics, 'apply'),
      run: (batch) => this.runMoves(batch),
    });
  }

  /** Applies a move (see tcc_apply): the only way an order's status changes. */
  apply(move: Move): Promise<MoveResult> {
    return this.moves.submit(move);
  }

  async answer(id: string): Promise<OrderAnswer | undefined> {
    return this.db.sql.one<OrderAnswer>(ORDERS_SQL.body, [id]);
  }

  /** The order as it stands; NOT_FOUND when the id names none. */
  async get(id: string): Promise<OrderAnswer> {
    const found = isUuid(id) ? await this.answer(id) : undefined;
    if (!found) throw AppError.notFound(`order ${id}`);
    return found;
  }

  async state(id: string): Promise<OrderState | undefined> {
    return this.db.sql.one<OrderState>(ORDERS_SQL.state, [id]);
  }

  /**
   * Another step holds the order (its lease: a charge, capture or authorization in flight, an
   * expiry releasing it): its outcome is awaited, up to IDEMPOTENCY_WAIT_MS, by re-reading the
   * order (10 ms, then doubling to 200 ms). The order as it then stands; still held once the wait
   * is up, as it is.
   */
  async awaitStep(id: string, held: (s: OrderState) => boolean = (s) => HOLDING.includes(s.status) && s.leased): Promise<OrderState | undefined> {
    const deadline = Date.now() + this.waitMs;
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      const s = await this.state(id);
      if (!s || !held(s) || Date.now() + pause >= deadline) return s;
      await sleep(pause);
    }
  }

  private async runMoves(batch: Move[]): Promise<MoveResult[]> {
    const rows = await this.db.sql.rows<ApplyRow>(ORDERS_SQL.apply, [JSON.stringify(batch.map(moveJson)), TERMINAL, REFUND.pending]);
    const out: MoveResult[] = new Array(batch.length);
    for (const r of rows) {
      out[r.r_idx - 1] = {
        id: r.r_id,
        found: r.r_status !== null,
        won: r.r_won,
        status: r.r_status as OrderStatus,
        previous: r.r_previous,
        refundStatus: r.r_refund_status,
        nextActionAt: r.r_next_action_at,
        refundNextAt: r.r_refund_next_at,
        attempts: r.r_attempts ?? 0,
        body: r.r_body ?? '',
      };
      if (r.r_flagged) {
        // A charge that landed after an operator force-confirmed the order: paid twice over.
        this.metrics.needsAttention.inc({ reason: 'capture_on_force_confirmed' });
        this.logger.error({ orderId: r.r_id, alert: 'capture_on_force_confirmed' }, 'a capture landed on a force-confirmed order: an operator should look at this order');
      }
    }
    return out;
  }
}
