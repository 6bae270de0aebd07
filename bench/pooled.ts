/**
 * The `pooled` workload of `npm run bench`: the Try (spread) and Try + Confirm loads with
 * DATABASE_URL through PgBouncer in transaction mode (started here, see pgbouncer.ts;
 * DATABASE_DIRECT_URL stays on Postgres for the migrations and the jobs' election), each right
 * beside the same load on the same number of service processes straight to Postgres — the ratio
 * pooled / direct is the figure, goal ≥ 0.9 — and then the Try load through the pooler on 1, 2 and
 * 4 processes. Run by run.ts, whose service launcher and load generator it uses.
 */
import { startPgBouncer } from './pgbouncer.js';

/** What run.ts measures a window with (its own types, restated here to keep the import one way). */
export interface PooledLoad {
  perSec: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface PooledDeps<L extends PooledLoad> {
  /** The bench database, direct. */
  dbUrl: string;
  processes: number;
  freePort(): Promise<number>;
  progress(what: string): void;
  /** A load on fresh service processes: `processes` of them, with `serviceEnv` over their usual environment; `extraServerPids` count as the server's CPU. */
  serviceLoad(script: string, env: Record<string, string>, opts: { processes: number; serviceEnv?: Record<string, string>; extraServerPids?: number[] }): Promise<L>;
}

export interface PooledResult<L extends PooledLoad> {
  tryDirect: L;
  tryPooled: L;
  pairDirect: L;
  pairPooled: L;
  /** The Try load through the pooler on 1, 2 and 4 service processes. */
  line: { processes: number; load: L }[];
}

export const POOLED_GOAL = 0.9;
export const POOLED_LINE = [1, 2, 4];

export async function pooledWorkload<L extends PooledLoad>(d: PooledDeps<L>, scripts: { try: string; pair: string }, tryEnv: Record<string, string>): Promise<PooledResult<L>> {
  const pooler = await startPgBouncer(d.dbUrl, await d.freePort());
  d.progress(`pooled: PgBouncer (transaction mode) in front of ${new URL(d.dbUrl).host}`);
  try {
    const pooled = { serviceEnv: { DATABASE_URL: pooler.url(d.dbUrl), DATABASE_DIRECT_URL: d.dbUrl }, extraServerPids: [pooler.pid] };
    const all = { processes: d.processes };
    // Direct first for the Try, pooled first for the pair: the machine's drift falls on both sides.
    const tryDirect = await d.serviceLoad(scripts.try, tryEnv, all);
    const tryPooled = await d.serviceLoad(scripts.try, tryEnv, { ...all, ...pooled });
    const pairPooled = await d.serviceLoad(scripts.pair, tryEnv, { ...all, ...pooled });
    const pairDirect = await d.serviceLoad(scripts.pair, tryEnv, all);
    const line: { processes: number; load: L }[] = [];
    for (const processes of POOLED_LINE) line.push({ processes, load: await d.serviceLoad(scripts.try, tryEnv, { processes, ...pooled }) });
    return { tryDirect, tryPooled, pairDirect, pairPooled, line };
  } finally {
    await pooler.stop();
  }
}
