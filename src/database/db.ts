import pg from 'pg';
import { AppError } from '../common/errors.js';

/**
 * A statement the code sends often: named, so each connection parses and plans it once and then
 * only binds parameters (a prepared statement). Every module keeps its statements in its own SQL
 * file; nothing else writes SQL text.
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

function config(stmt: Statement | string, params: unknown[] = []): pg.QueryConfig {
  return typeof stmt === 'string' ? { text: stmt, values: params } : { name: stmt.name, text: stmt.text, values: params };
}

function sqlOn(target: Queryable): Sql {
  const run = async (stmt: Statement | string, params?: unknown[]) => {
    try {
      return await target.query(config(stmt, params));
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

const PING = statement('db_ping', 'SELECT 1');

/** What a checked-out client's dead connection emits (see the Db constructor); its next query reports it. */
function ignoreClientError(): void {}

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
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|Connection ended unexpectedly/i.test(msg);
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
  if (isConnectionError(err)) return new AppError('SERVICE_UNAVAILABLE', 'the database cannot be reached');
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

export interface DbOptions {
  url: string;
  poolSize: number;
  applicationName?: string;
}

/**
 * The pool every request and job uses (node-postgres directly: TypeORM keeps the migrations and
 * the CLI's data source). Transactions are explicit and short, and never span a network call to
 * anything but Postgres: `tx` hands the callback its Sql as a required argument.
 */
export class Db {
  readonly pool: pg.Pool;
  readonly sql: Sql;

  constructor(opts: DbOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: opts.applicationName ?? 'tcc-inventory',
      // A query that hangs (a killed backend, a lock storm) must not pin a pool slot forever.
      statement_timeout: 30_000,
      idle_in_transaction_session_timeout: 60_000,
    });
    // An idle client whose connection dies emits here; the next query gets a fresh one.
    this.pool.on('error', () => undefined);
    // A checked-out client is another matter: the pool takes its own listener off during checkout,
    // and node-postgres emits 'error' on a client whose connection dies between two queries (a
    // killed backend, a Postgres restart). With no listener that is an uncaught exception and the
    // process dies — a worker holding a periodic job's lock session went down this way. Every
    // client keeps this listener for its life; the dead one is then not queryable, its next query
    // fails as a connection error (503 upstream), and the pool drops it on release.
    this.pool.on('connect', (client) => client.on('error', ignoreClientError));
    this.sql = sqlOn(this.pool);
  }

  async tx<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(sqlOn(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw translate(err);
    } finally {
      client.release(broken);
    }
  }

  /** Postgres answers. */
  async ping(): Promise<void> {
    await this.sql.one(PING);
  }

  /** A connection of its own, for session-level work (advisory locks). Release it. */
  async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw translate(err);
    }
  }

  /** Sql on a connection obtained from `connect`. */
  on(client: pg.PoolClient): Sql {
    return sqlOn(client);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}
