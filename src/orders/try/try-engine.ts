import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Batcher } from '../../common/batcher.js';
import { AppError } from '../../common/errors.js';
import { AppConfig } from '../../config/app-config.js';
import { BUSY_RETRY, Db, isolateFailure } from '../../database/db.js';
import { engineSeries, MetricsService } from '../../metrics/metrics.service.js';
import { HOLDING, PaymentStatus } from '../state/order-state.js';
import { stepLeaseMs } from '../state/order-store.js';
import { OrderScheduler } from '../order-scheduler.js';
import { tryRefusal } from './try-refusals.js';
import { type ProbeRow, TRY_SQL, type TryBatchRow } from './try.sql.js';

export interface TryRequest {
  key: string;
  /** What the key is bound to: the request body, equal as JSON with key order aside. */
  hash: string;
  customerId: string;
  items: { sku: string; quantity: number }[];
  /** The locations that may serve it; empty: any active location. */
  locationIds: string[];
  /** A Try that holds its payment: the token its authorization is asked with (API.md "Payment held at Try"). */
  paymentToken?: string;
}

/** The authorization's key, derived from the order (API.md: "Idempotency-Key derived from the order"). */
export const AUTHORIZATION_KEY_PREFIX = 'authorize-';
const AUTHORIZING: PaymentStatus = 'authorizing';
const AUTHORIZED: PaymentStatus = 'authorized';

export interface TryResult {
  created: boolean;
  /** The order JSON, as Postgres wrote it. */
  body: string;
}

/**
 * What a Try answers: the order, or the contract's refusal as a value. A refusal is the common
 * answer on a sold-out SKU (thousands a second), and a thrown error costs Nest's exception path
 * and a rejected promise per async frame — a large share of what a refusal costs in all
 * (BENCHMARKS.md, "Lessons"). Returned, it is answered like an order.
 */
export type TryAnswer = TryResult | AppError;

type Row = TryBatchRow | ProbeRow;

/** Past this many SKUs the sold-out hints start over (they only steer, never decide). */
const MAX_HINTS = 50_000;

/**
 * The group-commit engine for Try. Concurrent Trys in this process are sent to Postgres together,
 * as one call of tcc_try_batch (try-batch.sql: one transaction, one commit); each order in a batch
 * stays all-or-nothing and independent of the others, and orders on one SKU reserve in arrival
 * order.
 *
 * Sold out: each batch reports what it left of every SKU it saw. A Try that this says cannot fit
 * goes to a second batcher whose calls never take a lock (tcc_probe, probe.sql: judged on the
 * last committed stock): its refusal does not queue behind the hot row — and if the stock is there
 * after all (a restock, a release), the snapshot says so and the Try takes the normal path. A hint
 * only steers; the answer always comes from Postgres.
 */
@Injectable()
export class TryEngine {
  private readonly main: Batcher<TryRequest, Row>;
  private readonly probe: Batcher<TryRequest, Row>;
  private readonly available = new Map<string, number>();
  private readonly env: AppConfig['env'];
  private readonly leaseMs: number;

  constructor(
    private readonly db: Db,
    private readonly scheduler: OrderScheduler,
    config: AppConfig,
    metrics: MetricsService,
  ) {
    this.env = config.env;
    this.leaseMs = stepLeaseMs(config.env);
    const opts = { maxBatch: this.env.TRY_BATCH_MAX, windowMs: this.env.TRY_BATCH_WINDOW_MS, keyOf: (r: TryRequest) => r.key };
    this.main = new Batcher<TryRequest, Row>({
      ...opts,
      maxInFlight: this.env.TRY_BATCH_IN_FLIGHT,
      ...engineSeries(metrics, 'try'),
      isolate: isolateFailure,
      retry: BUSY_RETRY,
      run: (batch) => this.run(batch, false),
    });
    this.probe = new Batcher<TryRequest, Row>({
      ...opts,
      // One at a time: a probe is short (a read, no lock), and fewer busy backends leave the CPU to
      // the HTTP path — more in flight gave fewer answers at a higher p99 (BENCHMARKS.md).
      maxInFlight: 1,
      // The same wait for company as a Try batch (opts), ending once the convoy is in (see
      // Batcher): fewer, fuller probe calls, each refusal cheaper for Postgres.
      ...engineSeries(metrics, 'probe'),
      isolate: isolateFailure,
      retry: BUSY_RETRY,
      run: (batch) => this.run(batch, true),
    });
  }

  /**
   * Reserves every line or nothing. A key that another Try is claiming right now is tried again
   * until IDEMPOTENCY_WAIT_MS has passed, then answered IDEMPOTENCY_IN_PROGRESS.
   */
  async reserve(req: TryRequest): Promise<TryAnswer> {
    if (this.looksShort(req)) {
      const row = await this.probe.submit(req);
      // 'retry': the snapshot cannot refuse it. IN_PROGRESS: its key is busy; the loop below waits.
      if (row.r_outcome !== 'retry' && row.r_outcome !== 'IDEMPOTENCY_IN_PROGRESS') return this.finish(row, req);
    }
    const deadline = Date.now() + this.env.IDEMPOTENCY_WAIT_MS;
    for (let pause = 2; ; pause = Math.min(pause * 2, 100)) {
      const row = await this.main.submit(req);
      if (row.r_outcome !== 'IDEMPOTENCY_IN_PROGRESS' || Date.now() + pause >= deadline) return this.finish(row, req);
      await sleep(pause);
    }
  }

  private looksShort(req: TryRequest): boolean {
    if (this.env.CUSTOMER_MAX_HOLDING_ORDERS > 0) return false; // the limit outranks the stock: judged under the locks
    return req.items.some((l) => {
      const left = this.available.get(l.sku);
      return left !== undefined && left < l.quantity;
    });
  }

  private async run(batch: TryRequest[], snapshotOnly: boolean): Promise<Row[]> {
    // The batch as flat arrays: each line names its order (1-based), and so does each allowed location.
    const lineOrder: number[] = [];
    const skus: string[] = [];
    const qty: number[] = [];
    const locationOrder: number[] = [];
    const locations: string[] = [];
    for (let i = 0; i < batch.length; i++) {
      for (const l of batch[i].items) {
        lineOrder.push(i + 1);
        skus.push(l.sku);
        qty.push(l.quantity);
      }
      for (const id of batch[i].locationIds) {
        locationOrder.push(i + 1);
        locations.push(id);
      }
    }
    const keys = batch.map((r) => r.key);
    const hashes = batch.map((r) => r.hash);
    // Only a batch with a Try that holds its payment carries the payment part (the classic Try's call is as it was).
    const payment = batch.some((r) => r.paymentToken !== undefined)
      ? JSON.stringify({ tokens: batch.map((r) => r.paymentToken ?? null), leaseMs: this.leaseMs, keyPrefix: AUTHORIZATION_KEY_PREFIX, authorizing: AUTHORIZING, authorized: AUTHORIZED })
      : null;
    const rows = snapshotOnly
      ? await this.db.sql.rows<Row>(TRY_SQL.probe, [keys, hashes, lineOrder, skus, qty, locationOrder, locations])
      : await this.db.sql.rows<Row>(TRY_SQL.tryBatch, [
          keys,
          hashes,
          batch.map((r) => r.customerId),
          lineOrder,
          skus,
          qty,
          locationOrder,
          locations,
          this.env.ALLOCATION_STRATEGY,
          this.env.RESERVATION_TTL_MS,
          this.env.CUSTOMER_MAX_HOLDING_ORDERS,
          HOLDING,
          payment,
        ]);
    const out: Row[] = new Array(batch.length);
    let created = false;
    if (this.available.size > MAX_HINTS) this.available.clear();
    for (const row of rows) {
      if (row.r_idx === 0) this.available.set(row.r_sku!, row.r_available!);
      else {
        out[row.r_idx - 1] = row;
        created ||= row.r_outcome === 'created';
      }
    }
    if (created) this.scheduleExpiry();
    return out;
  }

  /** One scheduling call per batch (the scheduler dedupes per time bucket). The sweeper covers a lost one. */
  private scheduleExpiry(): void {
    void this.scheduler.expiryDue(new Date(Date.now() + this.env.RESERVATION_TTL_MS));
  }

  private finish(row: Row, req: TryRequest): TryAnswer {
    switch (row.r_outcome) {
      case 'created':
      case 'replayed':
        return { created: row.r_outcome === 'created', body: row.r_body! };
      case 'retry':
        throw new Error('tcc_probe answered retry where an answer was due');
      default:
        return tryRefusal(row.r_outcome, row, req, this.env.CUSTOMER_MAX_HOLDING_ORDERS);
    }
  }
}
