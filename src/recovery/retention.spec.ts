import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import type { Db, Statement } from '../database/db.js';
import type { PeriodicJobs } from '../database/periodic.js';
import { SESSION_LOCKS } from '../database/session-lock.js';
import type { MetricsService } from '../metrics/metrics.service.js';
import { OrdersBatch, Retention } from './retention.js';

/**
 * Retention's collaborators, faked: each of its four statements answers the next of its batches
 * (then nothing), every call is recorded with its parameters, and `tick` ms pass on Date.now with
 * each call; counters and the periodic registry record what they are told.
 */
function retention(batches: { orders: OrdersBatch[]; branches: number[]; deliveries: number[]; audit?: number[] }, opts: { tick?: number; stopAfter?: number; days?: number } = {}) {
  const calls: { kind: string; params: unknown[] }[] = [];
  const deleted: { kind: string; n: number }[] = [];
  const registered: unknown[][] = [];
  let now = 1_000_000;
  const called = (kind: string, params: unknown[]) => {
    calls.push({ kind, params });
    now += opts.tick ?? 0;
  };
  const db = {
    sql: {
      one: async (stmt: Statement, p: unknown[]) => {
        if (stmt.name === 'retention_orders') {
          called('orders', p);
          return batches.orders.shift() ?? { scanned: 0, orders: 0, events: 0, barrier_rows: 0, last_created_at: null, last_id: null };
        }
        if (stmt.name === 'retention_branches') {
          called('branches', p);
          const n = batches.branches.shift() ?? 0;
          return { branches: n, branch_rows: n, barrier_rows: 2 * n, reservations: n };
        }
        throw new Error(`unexpected ${stmt.name}`);
      },
      exec: async (stmt: Statement, p: unknown[]) => {
        if (stmt.name === 'retention_audit') {
          called('audit', p);
          return batches.audit?.shift() ?? 0;
        }
        if (stmt.name !== 'retention_deliveries') throw new Error(`unexpected ${stmt.name}`);
        called('deliveries', p);
        return batches.deliveries.shift() ?? 0;
      },
    },
  } as unknown as Db;
  const periodic = { register: (...args: unknown[]) => void registered.push(args), stopped: () => opts.stopAfter !== undefined && calls.length >= opts.stopAfter } as unknown as PeriodicJobs;
  const metrics = { retentionDeleted: { inc: (labels: { kind: string }, n: number) => void deleted.push({ kind: labels.kind, n }) } } as unknown as MetricsService;
  const config = { env: { RETENTION_DAYS: opts.days ?? 30, RETENTION_INTERVAL_MS: 600_000 } } as unknown as AppConfig;
  const realNow = Date.now;
  Date.now = () => now;
  return { retention: new Retention(db, periodic, config, metrics), calls, deleted, registered, restore: () => (Date.now = realNow) };
}

const page = (scanned: number, orders: number, at: string, id: string): OrdersBatch => ({ scanned, orders, events: 3 * orders, barrier_rows: orders, last_created_at: at, last_id: id });

describe('Retention.run', () => {
  beforeAll(() => Logger.overrideLogger(false));
  let restore: () => void = () => undefined;
  afterEach(() => restore());

  it('the four kinds take turns, a batch each, until each has less than a batch left; orders follow their cursor', async () => {
    const r = retention({ orders: [page(500, 40, 't1', 'id1'), page(500, 0, 't2', 'id2'), page(120, 7, 't3', 'id3')], branches: [500, 3], deliveries: [500, 500, 9], audit: [500, 12] });
    restore = r.restore;
    await expect(r.retention.run(30)).resolves.toEqual({ orders: 47, order_events: 141, barrier_rows: 47 + 1006, reservations: 503, branches: 503, webhook_deliveries: 1009, audit_log: 512 });
    expect(r.calls.map((c) => c.kind)).toEqual(['orders', 'branches', 'deliveries', 'audit', 'orders', 'branches', 'deliveries', 'audit', 'orders', 'deliveries']);
    expect(r.calls.filter((c) => c.kind === 'audit').map((c) => c.params)).toEqual([
      [30, 500],
      [30, 500],
    ]);
    expect(r.calls.filter((c) => c.kind === 'orders').map((c) => c.params.slice(0, 3))).toEqual([
      [30, '-infinity', '00000000-0000-0000-0000-000000000000'],
      [30, 't1', 'id1'],
      [30, 't2', 'id2'],
    ]);
  });

  it('counts every row it deleted in tcc_retention_deleted_total by kind, and nothing for a kind with none', async () => {
    const r = retention({ orders: [page(10, 2, 't', 'i')], branches: [0], deliveries: [0] });
    restore = r.restore;
    await r.retention.run(30);
    expect(r.deleted).toEqual([
      { kind: 'orders', n: 2 },
      { kind: 'order_events', n: 6 },
      { kind: 'barrier_rows', n: 2 },
    ]);
  });

  it('a process that is stopping ends the run between two batches', async () => {
    const r = retention({ orders: [page(500, 1, 't', 'i'), page(500, 1, 't', 'i')], branches: [500, 500], deliveries: [500, 500] }, { stopAfter: 2 });
    restore = r.restore;
    await r.retention.run(30);
    expect(r.calls.map((c) => c.kind)).toEqual(['orders', 'branches']);
  });

  it('a run ends once it has spent its 30 s, whatever is left', async () => {
    const full = () => page(500, 1, 't', 'i');
    const r = retention({ orders: [full(), full(), full()], branches: [500, 500, 500], deliveries: [500, 500, 500] }, { tick: 11_000 });
    restore = r.restore;
    await r.retention.run(30);
    expect(r.calls.map((c) => c.kind)).toEqual(['orders', 'branches', 'deliveries']);
  });

  it('RETENTION_DAYS=0 registers nothing; otherwise one periodic run under the retention lock', () => {
    const off = retention({ orders: [], branches: [], deliveries: [] }, { days: 0 });
    off.retention.onApplicationBootstrap();
    off.restore();
    expect(off.registered).toEqual([]);
    const on = retention({ orders: [], branches: [], deliveries: [] });
    restore = on.restore;
    on.retention.onApplicationBootstrap();
    expect(on.registered.map((args) => args.slice(0, 3))).toEqual([['retention', 600_000, SESSION_LOCKS.retention]]);
  });
});
