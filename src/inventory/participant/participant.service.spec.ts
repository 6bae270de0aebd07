import { Logger } from '@nestjs/common';
import { AppError } from '../../common/errors.js';
import type { AppConfig } from '../../config/app-config.js';
import type { Db, Sql, Statement } from '../../database/db.js';
import type { DeploymentKey } from '../../database/deployment-key.js';
import type { MetricsService } from '../../metrics/metrics.service.js';
import type { BranchScheduler } from './branch-scheduler.js';
import { PARTICIPANT_SQL } from './participant.sql.js';
import { ParticipantService } from './participant.service.js';

interface Sku {
  on_hand: number;
  reserved: number;
  currency: string;
}

/**
 * The participant's collaborators, faked: a database that keeps the barrier, the SKUs, the
 * reservations and the branch rows in memory and answers the participant's statements by name
 * (a transaction that throws leaves it as it was), a scheduler and a counter that record calls.
 */
function world(skus: Record<string, Sku>) {
  let state = {
    barrier: new Map<string, string>(),
    skus: new Map(Object.entries(skus).map(([k, v]) => [k, { ...v }])),
    reservations: new Map<string, { sku: string; quantity: number }[]>(),
    branches: new Map<string, { status: string; expired: boolean }>(),
  };
  const reserveCalls: { skus: string[]; quantities: number[]; locations: string[]; strategy: string; ttlMs: number }[] = [];
  const settleCalls: { tx: string; reference: string; sold: boolean }[] = [];
  const timeouts: Date[] = [];
  const expired: unknown[] = [];
  const clone = () => ({
    barrier: new Map(state.barrier),
    skus: new Map([...state.skus].map(([k, v]) => [k, { ...v }])),
    reservations: new Map(state.reservations),
    branches: new Map([...state.branches].map(([k, v]) => [k, { ...v }])),
  });

  const answer = (stmt: Statement | string, p: any[]): any[] => {
    if (stmt === PARTICIPANT_SQL.due) return [...state.branches].filter(([, b]) => b.status === p[0] && b.expired).map(([id]) => ({ transaction_id: id }));
    const name = (stmt as Statement).name;
    switch (name) {
      case 'barrier_insert': {
        const key = `${p[0]}|${p[1]}`;
        if (state.barrier.has(key)) return [];
        state.barrier.set(key, p[2]);
        return [{}];
      }
      case 'barrier_lock_try':
        return state.barrier.has(`${p[0]}|try`) ? [{ reason: state.barrier.get(`${p[0]}|try`) }] : [];
      case 'barrier_ops':
        return ['try', 'confirm', 'cancel'].filter((op) => state.barrier.has(`${p[0]}|${op}`)).map((op) => ({ op }));
      case 'branch_reserve': {
        // tcc_branch_reserve's contract, in memory (each SKU at one location, 'default').
        reserveCalls.push({ skus: p[1], quantities: p[2], locations: p[3], strategy: p[4], ttlMs: p[5] });
        const [tx, skus, quantities] = p as [string, string[], number[]];
        const tryKey = `${tx}|try`;
        if (state.barrier.has(tryKey)) {
          if (state.barrier.has(`${tx}|cancel`)) return [{ r_outcome: 'TRANSACTION_CANCELED', r_status: 'CANCELED' }];
          return [{ r_outcome: 'repeated', r_status: state.barrier.has(`${tx}|confirm`) ? 'CONFIRMED' : 'RESERVED' }];
        }
        state.barrier.set(tryKey, 'try');
        const unknown = skus.find((s) => !state.skus.has(s));
        if (unknown) return [{ r_outcome: 'UNKNOWN_SKU', r_sku: unknown }];
        const unknownLocation = (p[3] as string[]).find((l) => l !== 'default');
        if (unknownLocation) return [{ r_outcome: 'UNKNOWN_LOCATION', r_location: unknownLocation }];
        if (new Set(skus.map((s) => state.skus.get(s)!.currency)).size > 1) return [{ r_outcome: 'CURRENCY_MISMATCH' }];
        const short = skus.findIndex((s, i) => state.skus.get(s)!.on_hand - state.skus.get(s)!.reserved < quantities[i]);
        if (short >= 0) {
          const s = state.skus.get(skus[short])!;
          return [{ r_outcome: 'INSUFFICIENT_STOCK', r_sku: skus[short], r_requested: quantities[short], r_available: s.on_hand - s.reserved }];
        }
        skus.forEach((s, i) => (state.skus.get(s)!.reserved += quantities[i]));
        state.reservations.set(tx, skus.map((sku, i) => ({ sku, quantity: quantities[i] })));
        state.branches.set(tx, { status: 'RESERVED', expired: false });
        return [{ r_outcome: 'reserved', r_status: 'RESERVED', r_expires_at: new Date(Date.parse('2030-01-01T00:00:00Z') + p[5]) }];
      }
      case 'branch_settle':
        settleCalls.push({ tx: p[0], reference: p[1], sold: p[2] });
        for (const r of state.reservations.get(p[0]) ?? []) {
          const s = state.skus.get(r.sku)!;
          s.reserved -= r.quantity;
          if (p[2]) s.on_hand -= r.quantity;
        }
        return [{}];
      case 'participant_expired': {
        const b = state.branches.get(p[0]);
        return b?.status === 'RESERVED' && b.expired ? [{ expired: 1 }] : [];
      }
      case 'participant_ended':
        state.branches.set(p[0], { ...(state.branches.get(p[0]) ?? { expired: false }), status: p[1] });
        return [];
      default:
        throw new Error(`unexpected statement ${name}`);
    }
  };
  const sql: Sql = {
    rows: async (stmt, params) => answer(stmt, params ?? []) as never[],
    one: async (stmt, params) => answer(stmt, params ?? [])[0],
    exec: async (stmt, params) => answer(stmt, params ?? []).length,
  };
  const db = {
    sql,
    tx: async <T>(work: (s: Sql) => Promise<T>): Promise<T> => {
      const before = clone();
      try {
        return await work(sql);
      } catch (err) {
        state = before;
        throw err;
      }
    },
  } as unknown as Db;
  const scheduler: BranchScheduler = { timeoutDue: async (at) => void timeouts.push(at) };
  const metrics = { participantExpired: { inc: (labels: unknown) => void expired.push(labels) } } as unknown as MetricsService;
  const config = {
    env: { PARTICIPANT_TTL_MS: 900_000, RESERVATION_MAX_TTL_MS: 3_600_000, ADMIN_TOKEN: 'participant-spec-token', ALLOCATION_STRATEGY: 'fewest-locations' },
  } as unknown as AppConfig;
  return {
    participant: new ParticipantService(db, scheduler, metrics, config, { derive: () => Buffer.alloc(32, 1) } as unknown as DeploymentKey),
    get state() {
      return state;
    },
    sku: (s: string) => state.skus.get(s)!,
    reserveCalls,
    settleCalls,
    timeouts,
    expired,
  };
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; status?: number; extra: Record<string, unknown> }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected a refusal, got ${String(err)}`);
  return { code: err.code, status: err.status, extra: err.extra };
}

const usd = (onHand: number): Sku => ({ on_hand: onHand, reserved: 0, currency: 'USD' });

describe('ParticipantService', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('reserves every line in one call (the allocation strategy, the locations allowed, the deadline) and schedules the deadline', async () => {
    const w = world({ b: usd(5), B: usd(5), a: usd(5) });
    await expect(w.participant.reserve('t1', [{ sku: 'b', quantity: 1 }, { sku: 'B', quantity: 2 }, { sku: 'a', quantity: 3 }], 60_000, ['default'])).resolves.toBe('RESERVED');
    expect(w.reserveCalls).toEqual([{ skus: ['b', 'B', 'a'], quantities: [1, 2, 3], locations: ['default'], strategy: 'fewest-locations', ttlMs: 60_000 }]);
    expect([w.sku('B').reserved, w.sku('a').reserved, w.sku('b').reserved]).toEqual([2, 3, 1]);
    expect(w.state.barrier.get('ext:t1|try')).toBe('try');
    expect(w.timeouts).toEqual([new Date(Date.parse('2030-01-01T00:00:00Z') + 60_000)]);
  });

  it('refuses before anything reaches the database: a SKU twice, a deadline past RESERVATION_MAX_TTL_MS', async () => {
    const w = world({ a: usd(5) });
    await expect(refusal(w.participant.reserve('t1', [{ sku: 'a', quantity: 1 }, { sku: 'a', quantity: 1 }], undefined))).resolves.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(refusal(w.participant.reserve('t1', [{ sku: 'a', quantity: 1 }], 3_600_001))).resolves.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(w.state.barrier.size).toBe(0);
  });

  it.each([
    ['an unknown SKU', [{ sku: 'nope', quantity: 1 }], { code: 'UNKNOWN_SKU', status: 409, extra: { sku: 'nope' } }],
    ['SKUs priced in two currencies', [{ sku: 'a', quantity: 1 }, { sku: 'eur', quantity: 1 }], { code: 'CURRENCY_MISMATCH', status: 409 }],
    ['a line short of stock', [{ sku: 'a', quantity: 1 }, { sku: 'few', quantity: 3 }], { code: 'INSUFFICIENT_STOCK', extra: { sku: 'few', requested: 3, available: 2 } }],
    ['an unknown location', [{ sku: 'a', quantity: 1 }], { code: 'UNKNOWN_LOCATION', status: 409, extra: { locationId: 'nowhere' } }, ['nowhere']],
  ])('refuses %s with a definite refusal, and leaves nothing behind (no barrier row, no stock held)', async (_what, lines, expected, locations = []) => {
    const w = world({ a: usd(5), few: usd(2), eur: { on_hand: 5, reserved: 0, currency: 'EUR' } });
    await expect(refusal(w.participant.reserve('t1', lines, undefined, locations))).resolves.toMatchObject(expected);
    expect(w.state.barrier.size).toBe(0);
    expect([...w.state.skus.values()].map((s) => s.reserved)).toEqual([0, 0, 0]);
  });

  it('a repeated Try answers the branch as it stands and reserves nothing again', async () => {
    const w = world({ a: usd(5) });
    await w.participant.reserve('t1', [{ sku: 'a', quantity: 2 }], undefined);
    await expect(w.participant.reserve('t1', [{ sku: 'a', quantity: 2 }], undefined)).resolves.toBe('RESERVED');
    await w.participant.confirm('t1');
    await expect(w.participant.reserve('t1', [{ sku: 'a', quantity: 2 }], undefined)).resolves.toBe('CONFIRMED');
    expect(w.sku('a')).toEqual({ on_hand: 3, reserved: 0, currency: 'USD' });
  });

  it('a Cancel before its Try is an empty rollback that fences the late Try off', async () => {
    const w = world({ a: usd(5) });
    await expect(w.participant.cancel('t1')).resolves.toBe('CANCELED');
    expect(w.state.barrier.get('ext:t1|try')).toBe('cancel');
    await expect(refusal(w.participant.reserve('t1', [{ sku: 'a', quantity: 1 }], undefined))).resolves.toMatchObject({ code: 'TRANSACTION_CANCELED' });
    expect(w.sku('a').reserved).toBe(0);
  });

  it('Confirm commits the stock once; Cancel after it is refused, Confirm without a Try or after a Cancel too', async () => {
    const w = world({ a: usd(5) });
    await expect(refusal(w.participant.confirm('t0'))).resolves.toMatchObject({ code: 'NO_RESERVATION' });
    await w.participant.reserve('t1', [{ sku: 'a', quantity: 2 }], undefined);
    await expect(w.participant.confirm('t1')).resolves.toBe('CONFIRMED');
    await expect(w.participant.confirm('t1')).resolves.toBe('CONFIRMED');
    expect(w.sku('a')).toEqual({ on_hand: 3, reserved: 0, currency: 'USD' });
    expect(w.settleCalls).toEqual([{ tx: 'ext:t1', reference: 't1', sold: true }]);
    await expect(refusal(w.participant.cancel('t1'))).resolves.toMatchObject({ code: 'TRANSACTION_CONFIRMED' });

    await w.participant.reserve('t2', [{ sku: 'a', quantity: 1 }], undefined);
    await w.participant.cancel('t2');
    await w.participant.cancel('t2');
    expect(w.sku('a')).toEqual({ on_hand: 3, reserved: 0, currency: 'USD' });
    await expect(refusal(w.participant.confirm('t2'))).resolves.toMatchObject({ code: 'TRANSACTION_CANCELED' });
  });

  it('cancels the reserved branches past their deadline and counts only those this call canceled; one confirmed meanwhile is marked so', async () => {
    const w = world({ a: usd(5) });
    await w.participant.reserve('late', [{ sku: 'a', quantity: 1 }], undefined);
    await w.participant.reserve('paid', [{ sku: 'a', quantity: 1 }], undefined);
    await w.participant.confirm('paid');
    // Both rows say RESERVED and past due; the barrier knows 'paid' was confirmed (its row lagged).
    w.state.branches.set('ext:late', { status: 'RESERVED', expired: true });
    w.state.branches.set('ext:paid', { status: 'RESERVED', expired: true });
    await expect(w.participant.expireDue()).resolves.toBe(1);
    expect(w.expired).toEqual([{ result: 'canceled' }]);
    expect(w.state.branches.get('ext:late')?.status).toBe('CANCELED');
    expect(w.state.branches.get('ext:paid')?.status).toBe('CONFIRMED');
    expect(w.sku('a')).toEqual({ on_hand: 4, reserved: 0, currency: 'USD' });
    await expect(w.participant.expireDue()).resolves.toBe(0);
  });

  it('a Confirm of a branch past its deadline, its expiry not run yet (late or lost), cancels it and answers TRANSACTION_CANCELED', async () => {
    const w = world({ a: usd(5) });
    await w.participant.reserve('slow', [{ sku: 'a', quantity: 2 }], undefined);
    w.state.branches.set('ext:slow', { status: 'RESERVED', expired: true });
    await expect(refusal(w.participant.confirm('slow'))).resolves.toMatchObject({ code: 'TRANSACTION_CANCELED' });
    expect(w.settleCalls).toEqual([{ tx: 'ext:slow', reference: 'slow', sold: false }]);
    expect(w.sku('a')).toEqual({ on_hand: 5, reserved: 0, currency: 'USD' });
    expect(w.expired).toEqual([{ result: 'canceled' }]);
    // Again, and the expiry arriving after it: nothing more to do.
    await expect(refusal(w.participant.confirm('slow'))).resolves.toMatchObject({ code: 'TRANSACTION_CANCELED' });
    await expect(w.participant.expireDue()).resolves.toBe(0);
    expect(w.sku('a')).toEqual({ on_hand: 5, reserved: 0, currency: 'USD' });
  });
});
