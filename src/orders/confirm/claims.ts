import { Injectable } from '@nestjs/common';
import { Batcher } from '../../common/batcher.js';
import { AppConfig } from '../../config/app-config.js';
import { Db } from '../../database/db.js';
import { engineSeries, MetricsService } from '../../metrics/metrics.service.js';
import { HOLDING, OrderStatus, PAYMENT_UNSETTLED, PaymentStatus } from '../state/order-state.js';
import { orderBatching, stepLeaseMs } from '../state/order-store.js';
import { CONFIRM_SQL } from './confirm.sql.js';

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
  /** This claim is the order's first charge request that may reach the gateway (no earlier one may have). */
  firstSend: boolean;
  /** The order as it stands, when not claimed. */
  body: string | null;
  /** The payment held at Try (null: paid at Confirm); `capturing` once this claim took its capture. */
  paymentStatus: PaymentStatus | null;
  /** The authorization to capture. */
  paymentId: string | null;
}

/** A claim takes an authorized payment's capture; an unsettled one is not claimed. */
const CAPTURE_FROM: readonly PaymentStatus[] = ['authorized'];
const CAPTURING: PaymentStatus = 'capturing';

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
  r_payment_status: PaymentStatus | null;
  r_payment_id: string | null;
  r_first_send: boolean;
}

/**
 * Claims of a gateway attempt, one at a time per order (tcc_claim, claim.sql), through a
 * group-commit batcher: one database call for every claim that arrives together.
 */
@Injectable()
export class ConfirmClaims {
  private readonly claims: Batcher<ClaimRequest, Claim>;

  constructor(
    private readonly db: Db,
    config: AppConfig,
    metrics: MetricsService,
  ) {
    const leaseMs = stepLeaseMs(config.env);
    this.claims = new Batcher<ClaimRequest, Claim>({
      ...orderBatching(config),
      keyOf: (r) => r.id,
      ...engineSeries(metrics, 'claim'),
      run: (batch) => this.runClaims(batch, leaseMs),
    });
  }

  /** Claims the order's next gateway attempt (see tcc_claim). */
  claim(req: ClaimRequest): Promise<Claim> {
    return this.claims.submit(req);
  }

  private async runClaims(batch: ClaimRequest[], leaseMs: number): Promise<Claim[]> {
    const rows = await this.db.sql.rows<ClaimRow>(CONFIRM_SQL.claim, [
      batch.map((r) => r.id),
      batch.map((r) => r.paymentToken),
      batch.map((r) => r.job),
      leaseMs,
      HOLDING,
      PAYMENT_UNSETTLED,
      CAPTURE_FROM,
      CAPTURING,
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
        firstSend: r.r_first_send,
        body: r.r_body,
        paymentStatus: r.r_payment_status,
        paymentId: r.r_payment_id,
      };
    }
    return out;
  }
}
