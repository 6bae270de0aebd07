import pg from 'pg';
import { ReplicaReads } from './replica-reads.js';
import { DatabaseUnreachableError, isConnectionError, queryConfig, Sql, sqlOn, statement, translate } from './sql.js';

export { BUSY_RETRY, DatabaseBusyError, DatabaseError, DatabaseUnreachableError, isConnectionError, isolateFailure, PG, pgCode, statement, translate, unmappedOutcome } from './sql.js';
export type { Sql, Statement } from './sql.js';

/** A transaction's statements, and its idle time, are bounded by its own SET LOCAL (see BEGIN). */
const STATEMENT_TIMEOUT_MS = 30_000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/**
 * One round trip opens a transaction with its timeouts. SET LOCAL ends with the transaction, so no
 * setting outlives it on a server connection a pooler hands to someone else next; nothing is sent
 * as a startup parameter (PgBouncer refuses those it does not know).
 */
const BEGIN = `BEGIN; SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}; SET LOCAL idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_TIMEOUT_MS}`;

const PING = statement('db_ping', 'SELECT 1');

/** What a checked-out client's dead connection emits (see the Db constructor); its next query reports it. */
function ignoreClientError(): void {}

export interface DbOptions {
  /** DATABASE_URL: Postgres itself, or a transaction-mode pooler in front of it. */
  url: string;
  poolSize: number;
  applicationName?: string;
  /** DATABASE_READ_URL: a streaming replica for `read` (replica-reads.ts). */
  readUrl?: string;
  /** READ_REPLICA_MAX_LAG_MS. */
  maxLagMs?: number;
}

/**
 * The pool every request and job uses (node-postgres directly: TypeORM keeps the migrations and
 * the CLI's data source). Transactions are explicit and short, and never span a network call to
 * anything but Postgres: `tx` hands the callback its Sql as a required argument.
 *
 * Nothing sent through it depends on the server session, so DATABASE_URL may be a pooler in
 * transaction mode: unnamed statements, timeouts by SET LOCAL inside a transaction (and on the
 * client for a statement on its own), no session advisory lock, no LISTEN. What needs a session
 * uses DATABASE_DIRECT_URL (session-lock.ts, migrate-cli.ts). `read` is where the read routes go:
 * the replica while it is current, else this pool.
 */
export class Db {
  readonly pool: pg.Pool;
  readonly sql: Sql;
  readonly replica: ReplicaReads | undefined;
  readonly read: Sql;

  constructor(opts: DbOptions) {
    const applicationName = opts.applicationName ?? 'tcc-inventory';
    this.pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      // The only startup parameter: PgBouncer passes application_name on and refuses most others.
      application_name: applicationName,
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
    this.replica = opts.readUrl
      ? new ReplicaReads({ url: opts.readUrl, poolSize: opts.poolSize, applicationName, maxLagMs: opts.maxLagMs ?? 1000, primary: this.sql })
      : undefined;
    this.read = this.replica?.sql ?? this.sql;
  }

  async tx<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.run(work, 'COMMIT');
  }

  /** Runs `work` in a transaction that is then rolled back: what it would do, with nothing done (a dry run). */
  async rehearse<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.run(work, 'ROLLBACK');
  }

  private async run<T>(work: (sql: Sql) => Promise<T>, end: 'COMMIT' | 'ROLLBACK'): Promise<T> {
    const client = await this.connect();
    let broken = false;
    try {
      await client.query(queryConfig(BEGIN));
      const result = await work(sqlOn(client));
      await client.query(queryConfig(end));
      return result;
    } catch (err) {
      // A connection that failed or stopped answering is dropped, not asked to roll back: the
      // server ends the transaction with the session (or with its own timeouts).
      if (err instanceof DatabaseUnreachableError || isConnectionError(err)) broken = true;
      else
        await client.query(queryConfig('ROLLBACK')).catch(() => {
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

  /**
   * A pooled connection checked out, for one transaction (`tx`). Behind a pooler it is a server
   * session only until that transaction ends: session-level work goes to DATABASE_DIRECT_URL.
   */
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
    await this.replica?.close();
    await this.pool.end().catch(() => undefined);
  }
}
