import { Injectable, Logger } from '@nestjs/common';
import { Batcher } from '../common/batcher.js';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { batchSizeOf, MetricsService } from '../metrics/metrics.service.js';
import { HOLDING, OrderStatus, TERMINAL } from './order-state.js';
import { Move, moveJson } from './moves.js';
import { ORDERS_SQL } from './orders.sql.js';
import { REFUND, RefundStatus } from './refund-state.js';

/** An order as an answer: its status and its contract JSON, as Postgres wrote it. */
export interface OrderAnswer {
  status: OrderStatus;
  body: string;
}

export interface ClaimRequest {
  id: string;
  paymentToken: string | null;
  /** A job takes only a step that is due; a client's Confirm may start the first attempt. */
  job: boolean;
}

export interface Claim {
  found: boolean;
  claimed: boolean;
  id: string;
  status: OrderStatus;
  amountMinor: number;
  currency: string;
  paymentKey: string;
  paymentToken: string | null;
  attempts: number;
  chargeRequested: boolean;
  expired: boolean;
  leased: boolean;
  due: boolean;
  /** The attempt lease this claim holds; an unknown outcome is applied only with it. */
  lease: string | null;
  /** The order as it stands, when not claimed. */
  body: string | null;
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

export interface ExtendRow {
  status: OrderStatus;
  expired: boolean;
  at_cap: boolean;
  extended: boolean;
  expires_at: Date | null;
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
  body: string;
}

interface ClaimRow {
  r_idx: number;
  r_claimed: boolean;
  r_id: string;
  r_status: OrderStatus | null;
  r_amount: string | null;
  r_currency: string | null;
  r_payment_key: string | null;
  r_payment_token: string | null;
  r_attempts: number | null;
  r_charge_requested: boolean;
  r_expired: boolean | null;
  r_leased: boolean;
  r_due: boolean;
  r_lease: string | null;
  r_body: string | null;
}

interface ApplyRow {
  r_idx: string;
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

/**
 * The coordinator's storage: claims and moves go through group-commit batchers (one database call
 * for every claim, or every move, that arrives together), reads go straight to the pool.
 */
@Injectable()
export class OrderStore {
  /** How long a claimed step may run before another process may take the order again. */
  readonly leaseMs: number;
  private readonly maxTtlMs: number;
  private readonly claims: Batcher<ClaimRequest, Claim>;
  private readonly moves: Batcher<Move, MoveResult>;

  private readonly logger = new Logger(OrderStore.name);

  constructor(
    private readonly db: Db,
    config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    const leaseMs = (this.leaseMs = config.env.PAYMENT_TIMEOUT_MS * 2 + 5000);
    this.maxTtlMs = config.env.RESERVATION_MAX_TTL_MS;
    const common = { maxBatch: 64, maxInFlight: config.env.ORDER_BATCH_IN_FLIGHT, windowMs: config.env.ORDER_BATCH_WINDOW_MS };
    this.claims = new Batcher<ClaimRequest, Claim>({
      ...common,
      keyOf: (r) => r.id,
      onBatch: batchSizeOf(metrics, 'claim'),
      run: (batch) => this.runClaims(batch, leaseMs),
    });
    this.moves = new Batcher<Move, MoveResult>({
      ...common,
      keyOf: (m) => m.id,
      onBatch: batchSizeOf(metrics, 'apply'),
      run: (batch) => this.runMoves(batch),
    });
  }

  /** Claims the order's next gateway attempt (see tcc_claim). */
  claim(req: ClaimRequest): Promise<Claim> {
    return this.claims.submit(req);
  }

  /** Applies a move (see tcc_apply): the only way an order's status changes. */
  apply(move: Move): Promise<MoveResult> {
    return this.moves.submit(move);
  }

  /** The expiry's lease on an expired holding order; undefined when a step is running or it is not expired. */
  async claimExpiry(id: string): Promise<string | undefined> {
    return (await this.db.sql.one<{ lease: string }>(ORDERS_SQL.claimExpiry, [id, this.leaseMs, HOLDING]))?.lease;
  }

  async extend(id: string, extendByMs: number): Promise<ExtendRow | undefined> {
    return this.db.sql.one<ExtendRow>(ORDERS_SQL.extend, [id, extendByMs, this.maxTtlMs, HOLDING]);
  }

  async answer(id: string): Promise<OrderAnswer | undefined> {
    return this.db.sql.one<OrderAnswer>(ORDERS_SQL.body, [id]);
  }

  async state(id: string): Promise<OrderState | undefined> {
    return this.db.sql.one<OrderState>(ORDERS_SQL.state, [id]);
  }

  async drained(): Promise<void> {
    await Promise.all([this.claims.drained(), this.moves.drained()]);
  }

  private async runClaims(batch: ClaimRequest[], leaseMs: number): Promise<Claim[]> {
    const rows = await this.db.sql.rows<ClaimRow>(ORDERS_SQL.claim, [
      batch.map((r) => r.id),
      batch.map((r) => r.paymentToken),
      batch.map((r) => r.job),
      leaseMs,
      HOLDING,
    ]);
    const out: Claim[] = new Array(batch.length);
    for (const r of rows) {
      out[Number(r.r_idx) - 1] = {
        found: r.r_status !== null,
        claimed: r.r_claimed,
        id: r.r_id,
        status: r.r_status as OrderStatus,
        amountMinor: Number(r.r_amount ?? 0),
        currency: r.r_currency ?? '',
        paymentKey: r.r_payment_key ?? '',
        paymentToken: r.r_payment_token,
        attempts: r.r_attempts ?? 0,
        chargeRequested: r.r_charge_requested,
        expired: !!r.r_expired,
        leased: r.r_leased,
        due: r.r_due,
        lease: r.r_lease,
        body: r.r_body,
      };
    }
    return out;
  }

  private async runMoves(batch: Move[]): Promise<MoveResult[]> {
    const rows = await this.db.sql.rows<ApplyRow>(ORDERS_SQL.apply, [JSON.stringify(batch.map(moveJson)), TERMINAL, REFUND.pending]);
    const out: MoveResult[] = new Array(batch.length);
    for (const r of rows) {
      out[Number(r.r_idx) - 1] = {
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
