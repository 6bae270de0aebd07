import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import { isPgTimestamp, SignedCursor } from '../../common/signed-cursor.js';
import { AppConfig } from '../../config/app-config.js';
import { Db, Sql } from '../../database/db.js';
import { requireDistinctSkus } from '../../http/schemas.js';
import { MetricsService } from '../../metrics/metrics.service.js';
import { SkuRow, stockSql } from '../stock.sql.js';
import { BranchScheduler } from './branch-scheduler.js';
import { branchStock, ReservedLine } from './branch-stock.sql.js';
import { PARTICIPANT_SQL } from './participant.sql.js';
import { barrier, BranchStatus } from './tcc-barrier.js';

export interface LineRequest {
  sku: string;
  quantity: number;
}

export interface BranchView {
  transactionId: string;
  status: BranchStatus;
  items: { sku: string; quantity: number }[];
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
  private readonly logger = new Logger(ParticipantService.name);
  private readonly cursor: SignedCursor;

  constructor(
    private readonly db: Db,
    private readonly scheduler: BranchScheduler,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {
    this.cursor = new SignedCursor(config.env.ADMIN_TOKEN ?? '', 'participant-branches');
  }

  /** Try: reserve every line for the branch until its deadline (timeoutMs, default PARTICIPANT_TTL_MS). */
  async reserve(transactionId: string, lines: LineRequest[], timeoutMs: number | undefined): Promise<BranchStatus> {
    requireDistinctSkus(lines);
    const ttl = timeoutMs ?? this.config.env.PARTICIPANT_TTL_MS;
    if (ttl > this.config.env.RESERVATION_MAX_TTL_MS) {
      throw AppError.validation([{ field: 'timeoutMs', message: `timeoutMs must be from 1000 to ${this.config.env.RESERVATION_MAX_TTL_MS}` }]);
    }
    const { status, expiresAt } = await this.db.tx((sql) => this.reserveIn(sql, external(transactionId), lines, ttl));
    if (expiresAt) {
      await this.scheduler.timeoutDue(expiresAt).catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'branch timeout not scheduled; the sweeper will find it'));
    }
    return status;
  }

  async confirm(transactionId: string): Promise<BranchStatus> {
    return this.db.tx((sql) => this.confirmIn(sql, external(transactionId)));
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

  private async reserveIn(sql: Sql, transactionId: string, lines: LineRequest[], ttlMs: number): Promise<{ status: BranchStatus; expiresAt?: Date }> {
    if (!(await barrier.insert(sql, transactionId, 'try', 'try'))) {
      const status = await barrier.status(sql, transactionId);
      if (status === 'CANCELED') throw new AppError('TRANSACTION_CANCELED', `transaction ${transactionId} was canceled`);
      return { status: status ?? 'RESERVED' };
    }
    // SKU byte order, like every path that locks SKU rows: two multi-line branches cannot deadlock.
    const sorted = [...lines].sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
    checkSkus(await stockSql.find(sql, sorted.map((l) => l.sku)), sorted);
    await branchStock.recordReservation(sql, transactionId, sorted);
    const reserved: ReservedLine[] = [];
    for (const line of sorted) {
      const got = await branchStock.reserve(sql, line.sku, line.quantity);
      if (!got) {
        const available = (await branchStock.available(sql, line.sku)) ?? 0;
        throw new AppError('INSUFFICIENT_STOCK', `only ${available} of ${line.sku} available, ${line.quantity} requested`, {
          sku: line.sku,
          requested: line.quantity,
          available,
        });
      }
      reserved.push(got);
    }
    // The currency was read without a lock above; the locked rows are the truth.
    if (new Set(reserved.map((l) => l.currency)).size > 1) throw currencyMismatch();
    const items = JSON.stringify(sorted.map((l) => ({ sku: l.sku, quantity: l.quantity })));
    const row = await sql.one<{ expires_at: Date }>(PARTICIPANT_SQL.reserved, [transactionId, items, ttlMs]);
    return { status: 'RESERVED', expiresAt: row?.expires_at };
  }

  private async confirmIn(sql: Sql, transactionId: string): Promise<BranchStatus> {
    const tryReason = await barrier.lockTry(sql, transactionId);
    if (!tryReason) throw new AppError('NO_RESERVATION', `transaction ${transactionId} has no reservation`);
    if (tryReason === 'cancel' || (await barrier.status(sql, transactionId)) === 'CANCELED') {
      throw new AppError('TRANSACTION_CANCELED', `transaction ${transactionId} was canceled`);
    }
    if (await barrier.insert(sql, transactionId, 'confirm', 'confirm')) {
      await branchStock.lockBranchSkus(sql, transactionId);
      await branchStock.commit(sql, transactionId);
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
    if (canceledNow && tryReason === 'try') {
      await branchStock.lockBranchSkus(sql, transactionId);
      await branchStock.release(sql, transactionId);
    }
    await sql.exec(PARTICIPANT_SQL.ended, [transactionId, 'CANCELED']);
    return canceledNow;
  }
}

/** On /tcc/* every definite refusal is 409 (DTM rolls the global transaction back on it), these two included. */
const DEFINITE = 409;
const currencyMismatch = () => new AppError('CURRENCY_MISMATCH', 'the order mixes SKUs priced in different currencies', undefined, DEFINITE);

function checkSkus(found: SkuRow[], lines: LineRequest[]): void {
  const bySku = new Map(found.map((r) => [r.sku, r]));
  const unknown = lines.find((l) => !bySku.has(l.sku));
  if (unknown) throw new AppError('UNKNOWN_SKU', `SKU ${unknown.sku} does not exist`, { sku: unknown.sku }, DEFINITE);
  if (new Set(found.map((r) => r.currency)).size > 1) throw currencyMismatch();
}
