import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import { CURSOR_KEY_PURPOSE, isPgTimestamp, SignedCursor } from '../../common/signed-cursor.js';
import { AppConfig } from '../../config/app-config.js';
import { DeploymentKey } from '../../database/deployment-key.js';
import { Db, Sql, unmappedOutcome } from '../../database/db.js';
import { requireDistinctSkus } from '../../http/schemas.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { BranchScheduler } from './branch-scheduler.js';
import { BRANCH_STOCK_SQL, ReserveRow } from './branch-stock.sql.js';
import { PARTICIPANT_SQL } from './participant.sql.js';
import { barrier, BranchStatus } from './tcc-barrier.js';

export interface LineRequest {
  sku: string;
  quantity: number;
}

export interface BranchView {
  transactionId: string;
  status: BranchStatus;
  items: { sku: string; quantity: number; allocations: { locationId: string; quantity: number }[] }[];
  createdAt: string;
  expiresAt: string;
}

/** Outside transaction ids live in their own namespace: they can never touch this service's orders. */
export const external = (transactionId: string) => `ext:${transactionId}`;

/**
 * The inventory as a TCC branch for outside coordinators (/tcc/inventory/*, DTM or home-made).
 * Each phase is one local transaction guarded by the barrier (tcc-barrier.ts): repeats are no-ops,
 * a Cancel before its Try is an empty rollback that fences the late Try off, Confirm and Cancel
 * serialize on the branch's try row. A branch neither confirmed nor canceled by its deadline
 * (timeoutMs, default PARTICIPANT_TTL_MS) is canceled by the service exactly as if its Cancel had
 * come: a coordinator that died cannot hold stock forever.
 */
@Injectable()
export class ParticipantService {
  private readonly cursor: SignedCursor;

  constructor(
    private readonly db: Db,
    private readonly scheduler: BranchScheduler,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
    deploymentKey: DeploymentKey,
  ) {
    this.cursor = new SignedCursor(deploymentKey.derive(CURSOR_KEY_PURPOSE), 'participant-branches');
  }

  /**
   * Try: reserve every line for the branch until its deadline (timeoutMs, default
   * PARTICIPANT_TTL_MS), allocated to locations as a checkout Try's lines are (ALLOCATION_STRATEGY,
   * only `locationIds` when given).
   */
  async reserve(transactionId: string, lines: LineRequest[], timeoutMs: number | undefined, locationIds: string[] = []): Promise<BranchStatus> {
    requireDistinctSkus(lines);
    const ttl = timeoutMs ?? this.config.env.PARTICIPANT_TTL_MS;
    if (ttl > this.config.env.RESERVATION_MAX_TTL_MS) {
      throw AppError.validation([{ field: 'timeoutMs', message: `timeoutMs must be from 1000 to ${this.config.env.RESERVATION_MAX_TTL_MS}` }]);
    }
    const { status, expiresAt } = await this.db.tx((sql) => this.reserveIn(sql, external(transactionId), transactionId, lines, locationIds, ttl));
    if (expiresAt) {
      await this.scheduler.timeoutDue(expiresAt);
    }
    return status;
  }

  /**
   * A branch past its deadline is canceled, whenever its expiry runs (API.md: "a later Confirm
   * answers TRANSACTION_CANCELED"): a Confirm that finds it so cancels it first, as its expiry would
   * — the job may be late, or lost with Redis — and answers TRANSACTION_CANCELED.
   */
  async confirm(transactionId: string): Promise<BranchStatus> {
    const id = external(transactionId);
    const status = await this.db.tx((sql) => this.confirmIn(sql, id));
    if (status !== 'EXPIRED') return status;
    if (await this.db.tx((sql) => this.cancelIn(sql, id))) this.metrics.participantExpired.inc({ result: 'canceled' });
    throw new AppError('TRANSACTION_CANCELED', `transaction ${transactionId} was canceled: its timeout passed`);
  }

  async cancel(transactionId: string): Promise<BranchStatus> {
    await this.db.tx((sql) => this.cancelIn(sql, external(transactionId)));
    return 'CANCELED';
  }

  /** Cancels every reserved branch past its deadline, a page at a time; returns how many. */
  async expireDue(stopped: () => boolean = () => false): Promise<number> {
    let total = 0;
    for (;;) {
      const due = await this.db.sql.rows<{ transaction_id: string }>(PARTICIPANT_SQL.due, ['RESERVED', 200]);
      for (const { transaction_id: id } of due) {
        if (stopped()) return total;
        try {
          // Counted only by the call that canceled it: a job and the sweeper may both find it due,
          // and the coordinator's own Cancel may come first.
          if (await this.db.tx((sql) => this.cancelIn(sql, id))) {
            this.metrics.participantExpired.inc({ result: 'canceled' });
            total += 1;
          }
        } catch (err) {
          // Confirmed meanwhile: the coordinator made it in time (the row says so, so it is not due again).
          if (!(err instanceof AppError && err.code === 'TRANSACTION_CONFIRMED')) throw err;
          await this.db.sql.exec(PARTICIPANT_SQL.ended, [id, 'CONFIRMED']);
        }
      }
      if (due.length < 200) return total;
    }
  }

  /** Branches, oldest first, for operators (GET /admin/participant/transactions). */
  async list(q: { status?: BranchStatus; olderThanMinutes?: number; limit: number; cursor?: string }): Promise<{ data: BranchView[]; nextCursor: string | null }> {
    const after = q.cursor ? this.cursor.decode(q.cursor, 2, ([at]) => isPgTimestamp(at)) : undefined;
    const rows = await this.db.sql.rows<{ transaction_id: string; status: BranchStatus; items: BranchView['items']; created_at: string; expires_at: string; cursor_at: string }>(
      PARTICIPANT_SQL.list,
      [q.status ?? null, q.olderThanMinutes ?? null, after?.[0] ?? null, after?.[1] ?? null, q.limit + 1],
    );
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return {
      data: page.map((r) => ({ transactionId: r.transaction_id.replace(/^ext:/, ''), status: r.status, items: r.items, createdAt: r.created_at, expiresAt: r.expires_at })),
      nextCursor: rows.length > q.limit && last ? this.cursor.encode([last.cursor_at, last.transaction_id]) : null,
    };
  }

  /** The Try's one call (tcc_branch_reserve); a refusal throws, so the transaction rolls back with its barrier row. */
  private async reserveIn(sql: Sql, transactionId: string, given: string, lines: LineRequest[], locationIds: string[], ttlMs: number): Promise<{ status: BranchStatus; expiresAt?: Date }> {
    const row = (await sql.one<ReserveRow>(BRANCH_STOCK_SQL.reserve, [
      transactionId,
      lines.map((l) => l.sku),
      lines.map((l) => l.quantity),
      locationIds,
      this.config.env.ALLOCATION_STRATEGY,
      ttlMs,
    ]))!;
    switch (row.r_outcome) {
      case 'reserved':
        return { status: 'RESERVED', expiresAt: row.r_expires_at ?? undefined };
      case 'repeated':
        return { status: row.r_status ?? 'RESERVED' };
      case 'TRANSACTION_CANCELED':
        throw new AppError('TRANSACTION_CANCELED', `transaction ${given} was canceled`);
      case 'UNKNOWN_SKU':
        throw new AppError('UNKNOWN_SKU', `SKU ${row.r_sku} does not exist`, { sku: row.r_sku }, DEFINITE);
      case 'UNKNOWN_LOCATION':
        throw new AppError('UNKNOWN_LOCATION', `location ${row.r_location} does not exist`, { locationId: row.r_location }, DEFINITE);
      case 'CURRENCY_MISMATCH':
        throw new AppError('CURRENCY_MISMATCH', 'the order mixes SKUs priced in different currencies', undefined, DEFINITE);
      case 'INSUFFICIENT_STOCK':
        throw new AppError('INSUFFICIENT_STOCK', `only ${row.r_available} of ${row.r_sku} available, ${row.r_requested} requested`, {
          sku: row.r_sku,
          requested: row.r_requested,
          available: row.r_available,
        });
      default:
        throw unmappedOutcome('tcc_branch_reserve', row.r_outcome);
    }
  }

  /** CONFIRMED, or EXPIRED: a reserved branch past its deadline, left for `confirm` to cancel. */
  private async confirmIn(sql: Sql, transactionId: string): Promise<BranchStatus | 'EXPIRED'> {
    const tryReason = await barrier.lockTry(sql, transactionId);
    if (!tryReason) throw new AppError('NO_RESERVATION', `transaction ${transactionId} has no reservation`);
    if (tryReason === 'cancel' || (await barrier.status(sql, transactionId)) === 'CANCELED') {
      throw new AppError('TRANSACTION_CANCELED', `transaction ${transactionId} was canceled`);
    }
    if (await sql.one(PARTICIPANT_SQL.expired, [transactionId])) return 'EXPIRED';
    if (await barrier.insert(sql, transactionId, 'confirm', 'confirm')) {
      await sql.rows(BRANCH_STOCK_SQL.settle, [transactionId, transactionId.replace(/^ext:/, ''), true]);
      await sql.exec(PARTICIPANT_SQL.ended, [transactionId, 'CONFIRMED']);
    }
    return 'CONFIRMED';
  }

  /**
   * Release what Try reserved; before any Try it is an empty rollback that fences Try off. True
   * when this call canceled the branch, false when it already was.
   */
  private async cancelIn(sql: Sql, transactionId: string): Promise<boolean> {
    await barrier.insert(sql, transactionId, 'try', 'cancel');
    const tryReason = await barrier.lockTry(sql, transactionId);
    // Under the lock, a Confirm either committed before us (refuse) or waits for us.
    const status = await barrier.status(sql, transactionId);
    if (status === 'CONFIRMED') throw new AppError('TRANSACTION_CONFIRMED', `transaction ${transactionId} was confirmed`);
    const canceledNow = await barrier.insert(sql, transactionId, 'cancel', 'cancel');
    if (canceledNow && tryReason === 'try') await sql.rows(BRANCH_STOCK_SQL.settle, [transactionId, transactionId.replace(/^ext:/, ''), false]);
    await sql.exec(PARTICIPANT_SQL.ended, [transactionId, 'CANCELED']);
    return canceledNow;
  }
}

/** On /tcc/* every definite refusal is 409 (DTM rolls the global transaction back on it). */
const DEFINITE = 409;
