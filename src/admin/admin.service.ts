import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors.js';
import { ledgerActor, principalNote, type Actor, type Principal } from '../http/actor.js';
import { AppConfig } from '../config/app-config.js';
import { DeploymentKey } from '../database/deployment-key.js';
import { Db } from '../database/db.js';
import { isUuid } from '../common/uuid.js';
import { CancelService } from '../orders/cancel/cancel.service.js';
import { ConfirmService } from '../orders/confirm/confirm.service.js';
import { DueOrders } from '../orders/due-orders.js';
import { paidMove } from '../orders/state/moves.js';
import { HOLDING, OrderStatus } from '../orders/state/order-state.js';
import { OrderStore } from '../orders/state/order-store.js';
import { ORDERS_SQL } from '../orders/state/orders.sql.js';
import { REFUND, refundWatchMs } from '../orders/state/refund-state.js';
import { ADMIN_SQL } from './admin.sql.js';
import { CURSOR_KEY_PURPOSE, SignedCursor } from '../common/signed-cursor.js';
import { isPosition, ORDER_LIST_CURSOR, Position } from './cursor.js';
import { BulkCancelBody, ListOrdersQuery, OrderCountsQuery } from './admin.schemas.js';
import { GatewayPayment, GatewayRejectedError, GatewayUnavailableError } from '../payments/gateway.types.js';
import { PaymentGateway } from '../payments/payment-gateway.js';
import { ORDER_STATUSES } from '../orders/state/order-state.js';
import { idRange } from './id-prefix.js';
import { LastOutcome, lastOutcomeOf } from './last-outcome.js';

export interface AdminOrder {
  [field: string]: unknown;
  status: OrderStatus;
  nextActionAt: string | null;
  lastOutcome: LastOutcome | null;
  refundStatus: string | null;
  needsAttention: boolean;
}

interface ViewRow {
  id: string;
  created_at: string;
  body: string;
  next_action_at: string | null;
  refund_status: string | null;
  needs_attention: boolean;
  last_type: string | null;
  last_at: Date | null;
  last_data: Record<string, unknown> | null;
}

function view(row: ViewRow): AdminOrder {
  return {
    ...(JSON.parse(row.body) as AdminOrder),
    nextActionAt: row.next_action_at,
    refundStatus: row.refund_status,
    needsAttention: row.needs_attention,
    lastOutcome: lastOutcomeOf(row.last_type, row.last_at, row.last_data),
  };
}

/** Who for an event's data: the principal, and `operator` (the signed-in operator's name, or the name given at console sign-in). */
function operatorOf(actor: Actor): { operator?: string; principal: Principal } {
  return actor.operator ? { operator: actor.operator, ...principalNote(actor) } : principalNote(actor);
}

/** A timeline event: an operator action's names its principal (API.md, "Who did it"). */
export interface TimelineEvent {
  type: string;
  at: string;
  data: Record<string, unknown>;
  principal?: Principal;
}

function timelineEvent(r: { type: string; at: Date; data: Record<string, unknown> }): TimelineEvent {
  const { principal, ...data } = r.data ?? {};
  const at = new Date(r.at).toISOString();
  if (!principal || typeof principal !== 'object') return { type: r.type, at, data: r.data };
  const p = principal as Partial<Principal>;
  return { type: r.type, at, data, principal: { type: p.type ?? 'system', id: p.id ?? null, name: p.name ?? null } };
}

/** The list's filters besides status, as its statements take them. */
function filterParams(q: OrderCountsQuery): [boolean | null, number | null, string | null, string | null, string | null, string | null] {
  const ids = q.idPrefix === undefined ? undefined : idRange(q.idPrefix);
  return [
    q.needsAttention === undefined ? null : q.needsAttention === 'true',
    q.olderThanMinutes === undefined ? null : Number(q.olderThanMinutes),
    q.customerId ?? null,
    q.sku ?? null,
    ids?.[0] ?? null,
    ids?.[1] ?? null,
  ];
}

const PENDING: OrderStatus = 'CONFIRM_PENDING';

/** Bulk cancel moves this many orders at a time. */
const BULK_CHUNK = 50;

/**
 * Operator actions go through the same state machine, barrier and compare-and-set as automatic
 * runs: a force-cancel can never release stock twice, a force-confirm never revives a released
 * order. Every action is on the order's timeline with the operator's reason.
 */
@Injectable()
export class AdminService {
  private readonly cursors: SignedCursor;
  /** Newest-first cursors are their own kind: one never continues an oldest-first list. */
  private readonly newestCursors: SignedCursor;
  private readonly refundWatchMs: number;

  constructor(
    private readonly db: Db,
    private readonly store: OrderStore,
    private readonly cancels: CancelService,
    private readonly confirm: ConfirmService,
    private readonly due: DueOrders,
    private readonly gateway: PaymentGateway,
    config: AppConfig,
    deploymentKey: DeploymentKey,
  ) {
    const cursorKey = deploymentKey.derive(CURSOR_KEY_PURPOSE);
    this.cursors = new SignedCursor(cursorKey, ORDER_LIST_CURSOR);
    this.newestCursors = new SignedCursor(cursorKey, `${ORDER_LIST_CURSOR}:newest`);
    this.refundWatchMs = refundWatchMs(config.env);
  }

  async view(id: string): Promise<AdminOrder> {
    const row = isUuid(id) ? await this.db.sql.one<ViewRow>(ADMIN_SQL.adminView, [id, PENDING]) : undefined;
    if (!row) throw AppError.notFound(`order ${id}`);
    return view(row);
  }

  async forceConfirm(id: string, reason: string, actor: Actor): Promise<AdminOrder> {
    if (!isUuid(id)) throw AppError.notFound(`order ${id}`);
    if ((await this.db.sql.one(ADMIN_SQL.forceCapture, [id, HOLDING, reason, actor.operator ?? null, JSON.stringify(actor.principal)])) !== undefined) return this.forceCapture(id);
    // A charge in flight is awaited first: if it succeeds the order is paid through the gateway, and
    // forcing it would have left the customer charged besides the payment the operator vouches for.
    await this.store.awaitStep(id);
    const move = paidMove(id, `force-confirmed by an operator: ${reason}`, {
      forced: true,
      refundWatchMs: this.refundWatchMs,
      data: { actor: 'operator', operatorReason: reason },
      notes: [{ type: 'operator.force_confirm', data: { reason, ...operatorOf(actor) } }],
    });
    const r = await this.store.apply({ ...move, actor: ledgerActor(actor), operator: actor.operator });
    if (!r.found) throw AppError.notFound(`order ${id}`);
    if (r.status === 'CANCELED' || r.status === 'PAY_FAILED') throw new AppError('ORDER_CANCELED', `order ${id} is ${r.status}: its stock was released`);
    return this.view(id);
  }

  /**
   * An order whose payment was held at Try is captured like Confirm (force-confirm without a
   * capture is only for an order paid outside the gateway): now, its Confirm answered as it stands
   * afterwards — CONFIRM_PENDING while the capture's (or the authorization's) outcome is unknown.
   * A capture already in flight (a Confirm's, a retry's) is awaited like the expiry awaits one, up
   * to IDEMPOTENCY_WAIT_MS, so the operator is answered its outcome, not the order as it was.
   */
  private async forceCapture(id: string): Promise<AdminOrder> {
    await this.confirm.confirm(id, undefined, undefined);
    await this.store.awaitStep(id);
    const now = await this.view(id);
    if (now.status === 'CONFIRM_PENDING' && (now.payment as { status?: string } | null)?.status === 'authorizing') await this.due.settleAuthorization(id);
    const after = await this.view(id);
    if (after.status === 'CANCELED' || after.status === 'PAY_FAILED') throw new AppError('ORDER_CANCELED', `order ${id} is ${after.status}: its stock was released`);
    return after;
  }

  async forceCancel(id: string, reason: string, actor: Actor): Promise<AdminOrder> {
    await this.cancels.cancel(id, `force-canceled by an operator: ${reason}`, {
      data: { actor: 'operator', operatorReason: reason },
      notes: [{ type: 'operator.force_cancel', data: { reason, ...operatorOf(actor) } }],
    });
    return this.view(id);
  }

  /** A CONFIRM_PENDING order runs its next step now; TRY_SUCCESS answers unchanged; terminal ones 409. */
  async retryNow(id: string, actor: Actor): Promise<AdminOrder> {
    const current = await this.view(id);
    if (current.status === 'CONFIRM_SUCCESS') throw new AppError('ORDER_CONFIRMED', `order ${id} is confirmed`);
    if (current.status === 'CANCELED' || current.status === 'PAY_FAILED') throw new AppError('ORDER_CANCELED', `order ${id} is ${current.status}`);
    if (current.status !== 'CONFIRM_PENDING') return current;
    await this.db.sql.exec(ADMIN_SQL.retryNow, [id, 'CONFIRM_PENDING', actor.operator, JSON.stringify(actor.principal)]);
    // A Confirm waiting for its authorization: the authorization's next step (then the capture).
    if ((current.payment as { status?: string } | null)?.status === 'authorizing') await this.due.settleAuthorization(id);
    else await this.confirm.advance(id);
    return this.view(id);
  }

  async acknowledge(id: string, reason: string, actor: Actor): Promise<AdminOrder> {
    await this.view(id);
    await this.db.sql.exec(ADMIN_SQL.acknowledge, [id, reason, REFUND.needsAttention, REFUND.pending, actor.operator, JSON.stringify(actor.principal)]);
    return this.view(id);
  }

  async events(id: string): Promise<TimelineEvent[]> {
    await this.view(id);
    const rows = await this.db.sql.rows<{ type: string; at: Date; data: Record<string, unknown> }>(ORDERS_SQL.events, [id]);
    return rows.map(timelineEvent);
  }

  async list(q: ListOrdersQuery): Promise<{ data: AdminOrder[]; nextCursor: string | null }> {
    const limit = q.limit ? Number(q.limit) : 100;
    const newest = q.sort === 'newest';
    const cursors = newest ? this.newestCursors : this.cursors;
    const after = q.cursor ? (cursors.decode(q.cursor, 2, isPosition) as Position) : undefined;
    const rows = await this.db.read.rows<ViewRow>(newest ? ADMIN_SQL.listNewest : ADMIN_SQL.list, [
      q.status ?? null,
      ...filterParams(q),
      after?.[0] ?? null,
      after?.[1] ?? null,
      limit + 1,
      PENDING,
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { data: page.map(view), nextCursor: rows.length > limit && last ? cursors.encode([last.created_at, last.id]) : null };
  }

  /** How many orders the filters match: in all, and per status with the other filters. */
  async counts(q: OrderCountsQuery): Promise<{ total: number; byStatus: Record<string, number> }> {
    const rows = await this.db.read.rows<{ status: string; n: number }>(ADMIN_SQL.counts, filterParams(q));
    const byStatus = Object.fromEntries(ORDER_STATUSES.map((s) => [s, rows.find((r) => r.status === s)?.n ?? 0]));
    const total = q.status ? byStatus[q.status] : rows.reduce((sum, r) => sum + r.n, 0);
    return { total, byStatus };
  }

  /** What the gateway holds for the order (read-only: nothing is charged or refunded here). */
  async payments(id: string): Promise<{ data: GatewayPayment[] }> {
    await this.view(id);
    try {
      return { data: await this.gateway.lookup(id) };
    } catch (err) {
      // `reason` tells a reader why in one word: circuit_open (not asked), timeout, error, refused.
      if (err instanceof GatewayUnavailableError) throw new AppError('SERVICE_UNAVAILABLE', `the payment gateway did not answer: ${err.message}`, { reason: err.reason });
      if (err instanceof GatewayRejectedError) throw new AppError('SERVICE_UNAVAILABLE', `the payment gateway did not answer: ${err.message}`, { reason: 'refused' });
      throw err;
    }
  }

  /** Force-cancels every holding order the filter matches, at most 1000 a call; a dry run only counts. */
  async bulkCancel(body: BulkCancelBody, actor: Actor): Promise<{ matched: number; canceled: string[] }> {
    const f = body.filter;
    const statuses = f.status ? HOLDING.filter((s) => s === f.status) : HOLDING;
    if (statuses.length === 0) return { matched: 0, canceled: [] };
    const rows = await this.db.sql.rows<{ id: string }>(ADMIN_SQL.holding, [statuses, f.olderThanMinutes ?? null, f.customerId ?? null, f.sku ?? null, 1000]);
    if (body.dryRun) return { matched: rows.length, canceled: [] };
    const canceled: string[] = [];
    // A chunk at a time: up to 1000 moves at once would crowd the batcher checkout's Cancels share.
    for (let i = 0; i < rows.length; i += BULK_CHUNK) {
      await Promise.all(
        rows.slice(i, i + BULK_CHUNK).map(async ({ id }) => {
          try {
            const r = await this.cancels.cancel(id, `force-canceled by an operator (bulk): ${body.reason}`, {
              data: { actor: 'operator', operatorReason: body.reason, bulk: true },
              notes: [{ type: 'operator.force_cancel', data: { reason: body.reason, bulk: true, ...operatorOf(actor) } }],
            });
            if (r.won) canceled.push(id); // not one canceled meanwhile by its client or its TTL
          } catch (err) {
            if (!(err instanceof AppError && err.code === 'ORDER_CONFIRMED')) throw err; // paid meanwhile: not canceled
          }
        }),
      );
    }
    return { matched: rows.length, canceled };
  }
}
