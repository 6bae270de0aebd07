import pg from 'pg';
import { AppError } from '../common/errors.js';

/**
 * A statement the code sends often. Every module keeps its statements in its own SQL file; nothing
 * else writes SQL text. The name is for the reader (and the bench): the statement goes out
 * unnamed — Parse, Bind, Execute in one round trip, planned on each call — because a named
 * prepared statement lives in one server session, and behind a transaction-mode pooler
 * (PgBouncer) the next call may run on another one. The engine's plans live in its PL/pgSQL
 * functions, which each backend caches whatever connection calls them (BENCHMARKS.md, "Unnamed
 * statements").
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export function statement(name: string, text: string): Statement {
  return { name, text };
}

/** SQL against one connection: the pool (autocommit) or an open transaction. */
export interface Sql {
  rows<T>(stmt: Statement | string, params?: unknown[]): Promise<T[]>;
  one<T>(stmt: Statement | string, params?: unknown[]): Promise<T | undefined>;
  /** Runs a statement and returns the number of rows it touched. */
  exec(stmt: Statement | string, params?: unknown[]): Promise<number>;
}

type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/**
 * How long a query may keep its connection before the client gives up on it and drops the
 * connection (answered 503, like a lost connection): the guard against a server that stopped
 * answering (a dead host, a stopped pooler), and the only bound of a statement sent on its own,
 * since a statement_timeout would have to be a session setting. A statement of the engine's that
 * waits for row locks has its own lock_timeout (its function's SET clause). In a transaction this
 * is longer than its statement_timeout (db.ts), so the server's fires first and rolls it back.
 */
export const QUERY_TIMEOUT_MS = 35_000;

export function queryConfig(stmt: Statement | string, params: unknown[] = [], timeoutMs = QUERY_TIMEOUT_MS): pg.QueryConfig {
  // query_timeout per query is node-postgres's client-side timer (not in @types/pg's QueryConfig).
  return { text: typeof stmt === 'string' ? stmt : stmt.text, values: params, query_timeout: timeoutMs } as pg.QueryConfig;
}

export function sqlOn(target: Queryable): Sql {
  const run = async (stmt: Statement | string, params?: unknown[]) => {
    try {
      return await target.query(queryConfig(stmt, params));
    } catch (err) {
      throw translate(err);
    }
  };
  return {
    rows: async <T>(stmt: Statement | string, params?: unknown[]) => (await run(stmt, params)).rows as T[],
    one: async <T>(stmt: Statement | string, params?: unknown[]) => (await run(stmt, params)).rows[0] as T | undefined,
    exec: async (stmt: Statement | string, params?: unknown[]) => (await run(stmt, params)).rowCount ?? 0,
  };
}

/**
 * The end of a `switch` over a SQL function's outcome (a union of literals, the row type its
 * *.sql.ts declares): with every outcome handled, `outcome` is `never` here, so an outcome added to
 * the union but not handled is a compile error; one the database answers that the union does not
 * know (a database ahead of this code) is a fault, not an answer.
 */
export function unmappedOutcome(fn: string, outcome: never): Error {
  return new Error(`${fn} answered ${String(outcome)}`);
}

/** Postgres error codes we act on. */
export const PG = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  lockNotAvailable: '55P03',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  queryCanceled: '57014',
} as const;

export function pgCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The database cannot be reached or refuses us: a lost connection, a server shutting down or
 * starting (57P01-57P03), a connection failure (08xxx), out of resources such as "too many
 * clients" (53xxx), any FATAL refusal of a new connection (55000, 3D000, 28P01…). Answered
 * SERVICE_UNAVAILABLE, never a bare 500.
 */
export function isConnectionError(err: unknown): boolean {
  // A FATAL error ends the session: Postgres refused the connection (too many clients, the database
  // gone or not accepting connections, authentication) or killed it. Nothing the request did.
  if ((err as { severity?: unknown })?.severity === 'FATAL') return true;
  const code = pgCode(err);
  if (code && (CONNECTION_CODES.has(code) || /^(08|53|57P0[1-3])/.test(code))) return true;
  const msg = err instanceof Error ? err.message : String(err);
  return /Connection terminated|Query read timeout|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|Connection ended unexpectedly/i.test(msg);
}

/** The database cannot be reached (isConnectionError), as the contract answers it: 503. */
export class DatabaseUnreachableError extends AppError {
  constructor() {
    super('SERVICE_UNAVAILABLE', 'the database cannot be reached');
  }
}

/** Rolled back as a whole and safe to retry. */
const TRANSIENT = new Set<string>([PG.deadlockDetected, PG.serializationFailure, PG.queryCanceled, PG.lockNotAvailable]);

/**
 * The database was reached but refused this transaction for now (a lock wait past lock_timeout, a
 * deadlock, a serialization failure, a statement timeout): SERVICE_UNAVAILABLE like a lost
 * connection, but another transaction (the same work split, or later) may well succeed.
 */
export class DatabaseBusyError extends AppError {
  constructor(readonly pgCode: string) {
    super('SERVICE_UNAVAILABLE', 'the database is busy; retry the request');
  }
}

/** Busy in a way that passes: a lock another transaction held past the wait, a deadlock, a serialization failure (not a statement timeout). */
const PASSING = new Set<string>([PG.deadlockDetected, PG.serializationFailure, PG.lockNotAvailable]);

/**
 * When an engine's request (a Try, a claim, an order's move) is sent again by its batcher
 * (common/batcher.ts): after a passing busy failure, five times over about 3.6 s (±50 %), each
 * try waiting up to its lock_timeout. A hot SKU row queued behind a burst of adjustments or a
 * large import is then waited out instead of answered 503, and the outcome of a payment call is
 * not dropped for a lock; a row held longer (a session left open) still ends in 503 after ~7 s.
 * Safe because a failed call rolled back whole and every write is keyed or compare-and-set.
 */
export const BUSY_RETRY = {
  when: (err: unknown): boolean => err instanceof DatabaseBusyError && PASSING.has(err.pgCode),
  delaysMs: [50, 150, 400, 1000, 2000],
} as const;

/**
 * Whether a failed batch call is worth running again one request per call (common/batcher.ts):
 * anything but an unreachable database — a constraint one request broke, a lock one request waited
 * for too long — may be that request's alone.
 */
export function isolateFailure(err: unknown): boolean {
  return !(err instanceof AppError) || err instanceof DatabaseBusyError;
}

/**
 * What leaves this module is a contract error or an unknown defect, and never carries the
 * statement's parameters (a payment token must not reach a log through an error object).
 */
export function translate(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isConnectionError(err)) return new DatabaseUnreachableError();
  if (TRANSIENT.has(pgCode(err) ?? '')) return new DatabaseBusyError(pgCode(err)!);
  if (err instanceof Error) {
    const clean = new DatabaseError(err.message, pgCode(err));
    return clean;
  }
  return err;
}

/** A database error stripped to its message and code. */
export class DatabaseError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'DatabaseError';
  }
}
