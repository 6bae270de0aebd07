import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { TERMINAL } from '../orders/state/order-state.js';
import { ORDERS_SQL } from '../orders/state/orders.sql.js';
import { RefundService } from '../orders/cancel/refund.service.js';
import { voidKey } from '../orders/cancel/hold-release.js';
import { captureKey } from '../orders/confirm/capture.js';
import { Note, paymentTo } from '../orders/state/moves.js';
import { callOnlyMove, paymentMove } from '../orders/state/payment-moves.js';
import { OrderStore, stepLeaseMs } from '../orders/state/order-store.js';
import { refundWatchMs } from '../orders/state/refund-state.js';
import { GatewayPayment, isOpenHold } from '../payments/gateway.types.js';
import { PaymentGateway } from '../payments/payment-gateway.js';
import { PeriodicJobs } from '../database/periodic.js';
import { capturedMinor, findMismatch, Mismatch, SentOrder } from './mismatch.js';
import { RECOVERY_SQL } from './recovery.sql.js';

export interface ReconciliationReport {
  /** Orders compared with the gateway's record. */
  checked: number;
  mismatches: Mismatch[];
  /** True only when the pass stopped before the end of its window. */
  truncated: boolean;
  /** Orders the gateway could not be asked about (not counted in `checked`). */
  unreachable: string[];
}

interface Cursor {
  createdAt: string;
  id: string;
}

/** The first order the scheduled pass may not pass yet (recovery.sql.ts, unsettledFirst). */
interface Horizon {
  id: string;
  created_at: string;
  status: string;
  refund_watching: boolean;
}

const PAGE = 200;
const PARALLEL = 8;
/** An on-demand pass answers within a request: past this many orders it reports `truncated`. */
const ON_DEMAND_MAX = 5000;
/** The scheduled pass starts this far back the first time, then follows its cursor. */
const FIRST_WINDOW_MS = 24 * 3600_000;

/**
 * Compares finished orders that were ever sent to the gateway with the gateway's record, page by
 * page over the whole window, by reference:
 * - a CANCELED or PAY_FAILED order with money still captured after its refund watch: owed back
 *   (POST and the scheduled pass issue the refund, with the refund service's stable keys) and
 *   flagged for a human, like the mismatches below;
 * - a CONFIRM_SUCCESS order the gateway has no capture for (and no operator force-confirmed), or
 *   more than one capture for, or any capture on a force-confirmed one: needs a human;
 * - a payment held at Try: an authorization still holding money on a released order is voided (the
 *   refund step's round), one on a confirmed order never captured is captured (its order's key),
 *   one held besides a confirmed order's capture is voided — each flagged for a human too.
 * GET only reports. The scheduled pass remembers where it got to (job_state), so every order is
 * looked at however many finish between two passes, and records when it last succeeded.
 */
@Injectable()
export class ReconciliationService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ReconciliationService.name);

  constructor(
    private readonly db: Db,
    private readonly refunds: RefundService,
    private readonly store: OrderStore,
    private readonly gateway: PaymentGateway,
    private readonly metrics: MetricsService,
    private readonly periodic: PeriodicJobs,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers) return;
    this.periodic.register('reconciliation', this.config.env.RECONCILE_INTERVAL_MS, SESSION_LOCKS.reconciliation, () => this.scheduled());
  }

  /** One pass over the orders sent to the gateway in the last `sinceMs`; `act` issues refunds and raises flags. */
  async run(sinceMs: number, act: boolean): Promise<ReconciliationReport> {
    const report: ReconciliationReport = { checked: 0, mismatches: [], truncated: false, unreachable: [] };
    let cursor: Cursor | undefined;
    for (;;) {
      const page = await this.page(sinceMs, cursor, 0);
      if (report.checked + report.unreachable.length + page.length > ON_DEMAND_MAX) {
        report.truncated = true;
        break;
      }
      await this.check(page, act, report);
      if (page.length < PAGE) break;
      const last = page[page.length - 1];
      cursor = { createdAt: last.created_at, id: last.id };
    }
    return report;
  }

  /** The scheduled pass: from where the last one stopped to now, a page at a time. */
  private async scheduled(): Promise<void> {
    const saved = (await this.db.sql.one<{ state: { cursor?: Cursor } }>(RECOVERY_SQL.jobState, ['reconciliation']))?.state;
    let cursor = saved?.cursor;
    const report: ReconciliationReport = { checked: 0, mismatches: [], truncated: false, unreachable: [] };
    // Only orders past any possible TTL and the steps that can follow it — an attempt's lease, the
    // lookup, the refund watch — and never past the first one still holding or still watched (the
    // horizon): every order the cursor passes is settled, so it never passes one that could still
    // turn into something to check (a charge landing after the watch: only this pass finds it).
    const env = this.config.env;
    const settleMs = env.RESERVATION_MAX_TTL_MS + stepLeaseMs(env) + env.PAYMENT_TIMEOUT_MS * 2 + refundWatchMs(env) + 60_000;
    cursor ??= await this.firstCursor();
    const horizon = await this.db.sql.one<Horizon>(RECOVERY_SQL.unsettledFirst, [TERMINAL, FIRST_WINDOW_MS * 30, cursor.createdAt, cursor.id, settleMs]);
    for (;;) {
      if (this.periodic.stopped()) break;
      const page = await this.page(FIRST_WINDOW_MS * 30, cursor, settleMs, horizon);
      await this.check(page, true, report);
      if (page.length === 0 || report.unreachable.length > 0) break; // the gateway did not answer: this page again next time
      const last = page[page.length - 1];
      cursor = { createdAt: last.created_at, id: last.id };
      await this.db.sql.exec(RECOVERY_SQL.saveJobState, ['reconciliation', JSON.stringify({ cursor })]);
      if (page.length < PAGE) break;
    }
    if (report.unreachable.length === 0) {
      const [{ now_ms }] = await this.db.sql.rows<{ now_ms: number }>(RECOVERY_SQL.dbNow);
      await this.db.sql.exec(RECOVERY_SQL.saveJobState, ['reconciliation', JSON.stringify({ lastSuccessMs: Number(now_ms) })]);
    }
    // heldBy: the order the pass stopped before, not settled yet (it moves on once that one is).
    const heldBy = horizon ? { orderId: horizon.id, status: horizon.status, refundWatching: horizon.refund_watching } : undefined;
    this.logger.log({ checked: report.checked, mismatches: report.mismatches.length, unreachable: report.unreachable.length, heldBy }, 'reconciliation pass');
  }

  private async firstCursor(): Promise<Cursor> {
    const [{ now_ms }] = await this.db.sql.rows<{ now_ms: number }>(RECOVERY_SQL.dbNow);
    return { createdAt: new Date(Number(now_ms) - FIRST_WINDOW_MS).toISOString(), id: '00000000-0000-0000-0000-000000000000' };
  }

  private async page(sinceMs: number, after: Cursor | undefined, settleMs: number, before?: Horizon): Promise<SentOrder[]> {
    return this.db.sql.rows<SentOrder>(RECOVERY_SQL.sentPage, [TERMINAL, sinceMs, after?.createdAt ?? null, after?.id ?? null, PAGE, settleMs, before?.created_at ?? null, before?.id ?? null]);
  }

  private async check(orders: SentOrder[], act: boolean, report: ReconciliationReport): Promise<void> {
    for (let i = 0; i < orders.length; i += PARALLEL) {
      await Promise.all(orders.slice(i, i + PARALLEL).map((o) => this.checkOne(o, act, report)));
    }
  }

  private async checkOne(order: SentOrder, act: boolean, report: ReconciliationReport): Promise<void> {
    let payments: GatewayPayment[];
    try {
      payments = await this.gateway.lookup(order.id);
    } catch {
      report.unreachable.push(order.id);
      return;
    }
    report.checked += 1;
    const mismatch = findMismatch(order, payments);
    if (!mismatch) return;
    report.mismatches.push(mismatch);
    if (!act) return;
    if (mismatch.kind === 'charged_after_release' || mismatch.kind === 'authorized_after_release') {
      // Money captured or held on a released order past its refund watch: refund or void it (the
      // refund step's round, with its stable keys: twice refunds once), and flag it like any mismatch.
      this.metrics.reconciliationFixes.inc({ kind: mismatch.kind === 'charged_after_release' ? 'refund_issued' : 'void_issued' });
      const what = mismatch.kind === 'charged_after_release' ? `${capturedMinor(payments)} captured` : 'an authorization holding money';
      await this.refunds.owe(order.id, `reconciliation found ${what} on a ${order.status} order`);
      await this.refunds.process(order.id);
    }
    if (mismatch.kind === 'uncaptured_authorization') await this.captureHeld(order, payments.find(isOpenHold)!);
    if (mismatch.kind === 'extra_authorization') {
      for (const p of payments.filter(isOpenHold)) await this.voidExtra(order, p);
    }
    await this.flag(mismatch);
  }

  /**
   * A confirmed order whose authorization was never captured: captured now — with the order's
   * capture key when it is the order's own authorization (a capture of it that did happen replays),
   * else a key of that authorization's.
   */
  private async captureHeld(order: SentOrder, p: GatewayPayment): Promise<void> {
    const key = p.id === order.payment_id ? captureKey(order.id) : `capture-${p.id}`;
    const outcome = await this.gateway.capture(p.id, Math.min(Number(order.amount_minor), p.amountMinor), key);
    const call: Note = { type: 'payment.capture', data: { outcome: outcome.kind, latencyMs: outcome.latencyMs, paymentId: p.id, source: 'reconciliation' } };
    if (outcome.kind !== 'succeeded') return void (await this.store.apply(callOnlyMove(order.id, call)));
    this.metrics.reconciliationFixes.inc({ kind: 'capture_issued' });
    const change = { map: paymentTo('captured', ['authorized', 'capturing', 'voiding']), paymentId: p.id, capturedMinor: outcome.payment.capturedMinor };
    await this.store.apply(paymentMove(order.id, 'captured by reconciliation', change, { call }));
  }

  /** An authorization held besides a confirmed order's capture: voided. */
  private async voidExtra(order: SentOrder, p: GatewayPayment): Promise<void> {
    const outcome = await this.gateway.void(p.id, voidKey(p.id));
    if (outcome.kind === 'voided') this.metrics.reconciliationFixes.inc({ kind: 'void_issued' });
    await this.store.apply(callOnlyMove(order.id, { type: 'payment.void', data: { outcome: outcome.kind, latencyMs: outcome.latencyMs, paymentId: p.id, source: 'reconciliation' } }));
  }

  private async flag(m: Mismatch): Promise<void> {
    const reason = m.kind === 'capture_on_force_confirmed' ? 'capture_on_force_confirmed' : 'reconciliation_mismatch';
    const row = await this.db.sql.one<{ flagged: boolean }>(ORDERS_SQL.flagAttention, [m.orderId, reason, JSON.stringify({ kind: m.kind, detail: m.detail })]);
    if (!row?.flagged) return;
    this.metrics.reconciliationFixes.inc({ kind: 'mismatch' });
    this.metrics.needsAttention.inc({ reason });
    this.logger.error({ orderId: m.orderId, kind: m.kind, detail: m.detail, alert: reason }, 'reconciliation mismatch: an operator should look at this order');
  }
}
