import pg from 'pg';
import { QUERY_TIMEOUT_MS, queryConfig, translate } from './sql.js';

/** Advisory lock keys of the "one process at a time" jobs; one place, so two never collide. */
export const SESSION_LOCKS = {
  migrations: 0x7cc5_0000,
  sweeper: 0x7cc5_0001,
  reconciliation: 0x7cc5_0002,
  retention: 0x7cc5_0003,
  webhookSweep: 0x7cc5_0004,
  inventoryConsistency: 0x7cc5_0006,
  /** Transaction-level: the SQL functions applied after the migrations (sql-functions.ts). */
  sqlFunctions: 0x7cc5_0005,
  consoleSessions: 0x7cc5_00c0,
} as const;

/**
 * The transaction-level advisory locks the SQL functions take, `pg_advisory_xact_lock(space,
 * hashtext(value))`: two-key locks, so apart from the one-key SESSION_LOCKS above (Postgres keeps
 * the two kinds in separate spaces). Each space, the value it guards and the file that takes it; the
 * SQL writes the number out (a literal keeps the plan generic), and src/database/sql-locks.spec.ts
 * fails when a .sql file takes a lock that is not here, or not in the file named, or this lists one
 * no file takes.
 */
export const XACT_LOCK_SPACES = {
  /** An Idempotency-Key while its Try is judged (tcc_try_lock_keys, for the judge and the probe; a try-lock: a key already held is "in flight"). */
  idempotencyKey: { space: 7701, file: 'orders/try/key-locks.sql' },
  /** A customer while its holding orders are counted (tcc_try_batch, CUSTOMER_MAX_HOLDING_ORDERS). */
  customer: { space: 7702, file: 'orders/try/try-batch.sql' },
  /** A stock adjustment's Idempotency-Key (tcc_stock_adjust). */
  adjustmentKey: { space: 7703, file: 'inventory/ledger/adjust-stock.sql' },
} as const;

/**
 * The election of the one process that runs a periodic job: a session advisory lock, held on a
 * server session of this process's own for as long as the job runs. A session is what a
 * transaction-mode pooler does not keep, so this is the one connection a running process opens to
 * DATABASE_DIRECT_URL (opened at the first job, shared by every job, each with its own key).
 * A process that dies loses its session, and with it its locks: nothing to clean up. A session
 * killed while a job runs (a failover, pg_terminate_backend) loses the lock too; the job goes on
 * without it (another process may start one meanwhile: harmless, every step is a compare-and-set)
 * and the next job opens a new session. Jobs that fall due together (the sweeper's and the
 * poller's intervals meet every second) take turns on that session, one query at a time: pg 8
 * queues a query sent while another runs, with a deprecation warning, and pg 9 refuses it.
 */
export class SessionLocks {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  /** The session's last query, settled or not: the next one is sent after it. */
  private turn: Promise<unknown> = Promise.resolve();
  private failure: string | undefined;

  constructor(
    private readonly url: string,
    private readonly applicationName = 'tcc-inventory',
    /**
     * How long a lock query may wait for its answer before the session is dropped: a server that
     * stopped answering without closing (a host gone dark, a firewall that forgot the connection)
     * would otherwise hold every periodic job of this process until TCP gave up, many minutes on.
     */
    private readonly queryTimeoutMs = QUERY_TIMEOUT_MS,
  ) {}

  /**
   * Why the last election failed (the session could not be opened, or its lock query failed),
   * until one succeeds again; undefined while elections work. No periodic job of this process runs
   * meanwhile — health reports it (ops/health.service.ts).
   */
  failing(): string | undefined {
    return this.failure;
  }

  /** Runs `work` only if this process wins the lock `key`, holding it until `work` ends; undefined when another process holds it. */
  async withLock<T>(key: number, work: () => Promise<T>): Promise<T | undefined> {
    let client: pg.Client | undefined;
    let locked: boolean | undefined;
    try {
      client = await this.session();
      locked = (await this.query<{ locked: boolean }>(client, 'SELECT pg_try_advisory_lock($1) AS locked', key)).rows[0]?.locked;
      this.failure = undefined;
    } catch (err) {
      if (client) this.drop(client);
      const e = translate(err) as Error;
      this.failure = `DATABASE_DIRECT_URL: ${e.message}`;
      throw e;
    }
    if (!locked) return undefined;
    try {
      return await work();
    } finally {
      // On a session that has since died, the lock went with it.
      if (client === this.client) await this.query(client, 'SELECT pg_advisory_unlock($1)', key).catch(() => this.drop(client));
    }
  }

  /** Sends `text` once the session's query before it has settled; its timeout counts from then. */
  private query<R extends pg.QueryResultRow>(client: pg.Client, text: string, key: number): Promise<pg.QueryResult<R>> {
    const sent = this.turn.then(() => client.query<R>(queryConfig(text, [key], this.queryTimeoutMs)));
    this.turn = sent.catch(() => undefined);
    return sent;
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private session(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, application_name: this.applicationName, connectionTimeoutMillis: 5000, keepAlive: true });
    // A session that dies emits 'error' (with no listener, an uncaught exception): the next job opens another.
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    try {
      await client.connect();
    } catch (err) {
      throw translate(err);
    }
    this.client = client;
    return client;
  }

  private drop(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    client.end().catch(() => undefined);
  }
}
