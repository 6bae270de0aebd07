import { Logger } from '@nestjs/common';
import pg from 'pg';
import { isConnectionError, queryConfig, Sql, Statement } from './sql.js';

/** What /health says of the replica: `up` while reads go there, else `degraded` and why. */
export interface ReplicaState {
  status: 'up' | 'degraded';
  /** How stale the replica's answers may be now, as last measured (ms); absent when unknown. */
  lagMs?: number;
  reason?: string;
}

export interface ReplicaOptions {
  url: string;
  poolSize: number;
  applicationName: string;
  /** READ_REPLICA_MAX_LAG_MS: above this, reads go to the primary. */
  maxLagMs: number;
  /** The primary (DATABASE_URL): where reads go otherwise, and whose WAL position the lag is measured against. */
  primary: Sql;
}

/** Where the primary's WAL is written to: everything committed before this was asked for lies at or below it. */
const PRIMARY_POSITION = 'SELECT pg_current_wal_lsn()::text AS lsn';
const REPLICA_POSITION = 'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn';
/** A check left unanswered this long drops its connection, so the next one can find a replica that is back. */
const CHECK_TIMEOUT_MS = 5000;

/** A WAL position (`16/B374D848`) as a number. */
export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** A promise that rejects when the replica stops being current, for the reads then under way on it. */
function abandonment(): { promise: Promise<never>; reject: () => void } {
  let reject!: () => void;
  const promise = new Promise<never>((_, no) => (reject = () => no(new Error('the read replica stopped being current'))));
  promise.catch(() => undefined); // nobody may be waiting on it
  return { promise, reject };
}

type Finding = { at: number; lagMs: number; reason?: undefined } | { at: number; lagMs?: number; reason: string };

/** A primary WAL position and when it was asked for. */
export interface PrimarySample {
  at: number;
  lsn: bigint;
}

/**
 * How stale a replica that has replayed up to `replayed` may be at `at`, from the primary's
 * positions sampled before (oldest first): every commit made before a sample was taken lies at or
 * below its position, so the latest sample the replica has replayed past bounds the staleness.
 * None replayed past: the lag is at least the age of the oldest, and not known.
 */
export function staleness(samples: readonly PrimarySample[], replayed: bigint, at: number): { lagMs: number } | { reason: string } {
  const caughtUp = samples.findLast((s) => s.lsn <= replayed);
  if (caughtUp) return { lagMs: Math.max(0, at - caughtUp.at) };
  const oldest = samples[0];
  return { reason: oldest ? `replay lag at least ${at - oldest.at} ms` : "the primary's WAL position is not known yet" };
}

/**
 * Reads of the routes that decide no write (API.md "Running on more than one machine"), sent to a
 * streaming replica (DATABASE_READ_URL) while its answers are no staler than
 * READ_REPLICA_MAX_LAG_MS, else to the primary, so a lagging, paused or stopped replica costs
 * those reads some speed and nothing else.
 *
 * The lag is measured in the background, never on a request's way: every quarter of the allowed
 * lag (50 ms-1 s) the primary's WAL position is sampled, then the replica's replay position. Every
 * transaction that committed before a sample was taken lies at or below that sample's position,
 * so once the replica has replayed past it the replica is at most "now − that sample's time"
 * stale. An idle primary does not look like lag (its position does not move, and the replica has
 * replayed up to it), unlike `now() − pg_last_xact_replay_timestamp()`. Between two checks the
 * bound grows with the time since the last one, so a check that hangs (a paused replica) ends
 * the replica's turn by itself, and the reads then under way on it are asked of the primary.
 */
export class ReplicaReads {
  readonly sql: Sql;
  private readonly logger = new Logger('ReadReplica');
  private readonly pool: pg.Pool;
  private readonly everyMs: number;
  private readonly timer: NodeJS.Timeout;
  /** The primary's WAL positions, oldest first, each with the time it was asked for. */
  private samples: PrimarySample[] = [];
  private finding: Finding = { at: 0, reason: 'not checked yet' };
  private checking = false;
  private wasCurrent = false;
  private lost = abandonment();
  private closed = false;
  private lastLogAt = 0;
  private changesUnlogged = 0;

  constructor(private readonly opts: ReplicaOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize,
      // A replica that does not answer is soon left for the primary.
      connectionTimeoutMillis: 2000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: opts.applicationName,
    });
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
    this.everyMs = Math.min(1000, Math.max(50, Math.floor(opts.maxLagMs / 4)));
    this.timer = setInterval(() => this.tick(), this.everyMs);
    this.timer.unref();
    this.tick();
    const run = async (stmt: Statement | string, params?: unknown[]): Promise<pg.QueryResult> =>
      (this.current() && (await this.onReplica(stmt, params))) || this.onPrimary(stmt, params);
    this.sql = {
      rows: async <T>(stmt: Statement | string, params?: unknown[]) => (await run(stmt, params)).rows as T[],
      one: async <T>(stmt: Statement | string, params?: unknown[]) => (await run(stmt, params)).rows[0] as T | undefined,
      exec: async (stmt: Statement | string, params?: unknown[]) => (await run(stmt, params)).rowCount ?? 0,
    };
  }

  state(now = Date.now()): ReplicaState {
    const f = this.finding;
    const lagMs = f.lagMs === undefined ? undefined : f.lagMs + (now - f.at);
    if (this.current(now)) return { status: 'up', lagMs };
    return { status: 'degraded', ...(lagMs === undefined ? {} : { lagMs }), reason: f.reason ?? `replay lag above READ_REPLICA_MAX_LAG_MS (${this.opts.maxLagMs} ms)` };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.lost.reject();
    await this.pool.end().catch(() => undefined);
  }

  private current(now = Date.now()): boolean {
    const f = this.finding;
    return f.reason === undefined && f.lagMs + (now - f.at) <= this.opts.maxLagMs;
  }

  /** The primary's answer, in the QueryResult shape (its Sql has already translated any error). */
  private async onPrimary(stmt: Statement | string, params?: unknown[]): Promise<pg.QueryResult> {
    const rows = await this.opts.primary.rows<unknown>(stmt, params);
    return { rows, rowCount: rows.length } as pg.QueryResult;
  }

  /** The replica's answer, or undefined when it fails or stops being current meanwhile: the caller asks the primary. */
  private async onReplica(stmt: Statement | string, params?: unknown[]): Promise<pg.QueryResult | undefined> {
    const lost = this.lost.promise;
    let client: pg.PoolClient | undefined;
    let gaveUp = false;
    const connecting = this.pool.connect();
    // A connection that arrives after this read went to the primary is closed, not leaked.
    connecting.then((late) => gaveUp && late !== client && late.release(true), () => undefined);
    try {
      client = await Promise.race([connecting, lost]);
      return await Promise.race([client.query(queryConfig(stmt, params)), lost]);
    } catch (err) {
      gaveUp = true;
      if (isConnectionError(err)) this.judge({ at: Date.now(), reason: `the replica does not answer (${(err as Error).message})` });
      return undefined;
    } finally {
      client?.release(gaveUp);
    }
  }

  private tick(): void {
    const current = this.current();
    if (this.wasCurrent && !current) {
      this.lost.reject();
      this.lost = abandonment();
    }
    this.wasCurrent = current;
    if (this.checking || this.closed) return;
    this.checking = true;
    void this.check().finally(() => (this.checking = false));
  }

  private async check(): Promise<void> {
    try {
      const askedAt = Date.now();
      const primary = await this.opts.primary.one<{ lsn: string }>(PRIMARY_POSITION);
      if (primary) this.remember(askedAt, lsnValue(primary.lsn));
    } catch {
      // The primary away: its own health check says so; the replica is judged on the positions known.
    }
    let replica: { standby: boolean; lsn: string | null } | undefined;
    try {
      replica = (await this.pool.query<{ standby: boolean; lsn: string | null }>({ text: REPLICA_POSITION, query_timeout: CHECK_TIMEOUT_MS } as pg.QueryConfig)).rows[0];
    } catch (err) {
      this.judge({ at: Date.now(), reason: `the replica does not answer (${(err as Error).message})` });
      return;
    }
    const at = Date.now();
    if (!replica?.standby) return this.judge({ at, reason: 'DATABASE_READ_URL is not a standby (pg_is_in_recovery() is false)' });
    if (replica.lsn === null) return this.judge({ at, reason: 'the replica has replayed nothing yet' });
    this.judge({ at, ...staleness(this.samples, lsnValue(replica.lsn), at) });
  }

  /** Keeps the samples a lag up to twice the allowed one can be measured with. */
  private remember(at: number, lsn: bigint): void {
    this.samples.push({ at, lsn });
    const keepFrom = at - 2 * this.opts.maxLagMs - 2 * this.everyMs;
    while (this.samples.length > 1 && (this.samples[0].at < keepFrom || this.samples.length > 1000)) this.samples.shift();
  }

  /** Records a finding, and logs when reads change sides: at most one line per 10 s, with the count of changes. */
  private judge(finding: Finding): void {
    const was = this.current();
    this.finding = finding;
    const now = this.current();
    if (was === now) return;
    this.changesUnlogged += 1;
    if (Date.now() - this.lastLogAt < 10_000) return;
    const state = this.state();
    const line = { replica: state, changes: this.changesUnlogged };
    if (now) this.logger.log(line, 'reads go to the read replica');
    else this.logger.warn(line, 'reads go to the primary');
    this.lastLogAt = Date.now();
    this.changesUnlogged = 0;
  }
}
