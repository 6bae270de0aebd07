import { DataSource, QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';
import type { QueryRunner } from 'typeorm';
import { AppError } from '../common/errors.js';

/** Hand-written SQL against one connection: the pool (autocommit) or an open transaction. */
export interface Sql {
  rows<T>(text: string, params?: unknown[]): Promise<T[]>;
  one<T>(text: string, params?: unknown[]): Promise<T | undefined>;
  /** Runs a statement and returns the number of rows it touched. */
  exec(text: string, params?: unknown[]): Promise<number>;
}

class RunnerSql implements Sql {
  constructor(private readonly runner: QueryRunner) {}

  async rows<T>(text: string, params: unknown[] = []): Promise<T[]> {
    const result = await this.runner.query(text, params, true);
    return (result.records ?? []) as T[];
  }

  async one<T>(text: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.rows<T>(text, params))[0];
  }

  async exec(text: string, params: unknown[] = []): Promise<number> {
    const result = await this.runner.query(text, params, true);
    return result.affected ?? 0;
  }
}

/** Postgres error codes we act on. */
export const PG = {
  checkViolation: '23514',
  lockNotAvailable: '55P03',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  queryCanceled: '57014',
} as const;

export function pgCode(err: unknown): string | undefined {
  if (err instanceof QueryFailedError) return (err.driverError as { code?: string })?.code;
  return (err as { code?: string })?.code;
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08006', '08001', '08003']);

/** A lost or refused database connection: answered as SERVICE_UNAVAILABLE, never a bare 500. */
export function isConnectionError(err: unknown): boolean {
  // TypeORM releases a query runner whose connection died; the next statement on it says so.
  if (err instanceof QueryRunnerAlreadyReleasedError) return true;
  const code = pgCode(err);
  if (code && CONNECTION_ERRORS.has(code)) return true;
  const msg = err instanceof Error ? err.message : String(err);
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end/i.test(msg);
}

/**
 * The one way code here opens a transaction: short, explicit, and never spanning a network call
 * to anything but Postgres. The callback receives the transaction's Sql as a required argument.
 */
export class Db {
  readonly sql: Sql;

  constructor(readonly dataSource: DataSource) {
    this.sql = {
      rows: (text, params) => this.auto((s) => s.rows(text, params)),
      one: (text, params) => this.auto((s) => s.one(text, params)),
      exec: (text, params) => this.auto((s) => s.exec(text, params)),
    };
  }

  async tx<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction();
      try {
        const result = await work(new RunnerSql(runner));
        await runner.commitTransaction();
        return result;
      } catch (err) {
        if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
        throw err;
      }
    } catch (err) {
      throw translate(err);
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  private async auto<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.connect();
      return await work(new RunnerSql(runner));
    } catch (err) {
      throw translate(err);
    } finally {
      await runner.release().catch(() => undefined);
    }
  }
}

const TRANSIENT = new Set<string>([PG.deadlockDetected, PG.serializationFailure, PG.queryCanceled]);

function translate(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isConnectionError(err)) return new AppError('SERVICE_UNAVAILABLE', 'the database cannot be reached');
  // Rolled back as a whole and safe to retry: tell the client so instead of a bare 500.
  if (TRANSIENT.has(pgCode(err) ?? '')) return new AppError('SERVICE_UNAVAILABLE', 'the database is busy; retry the request');
  return err;
}
