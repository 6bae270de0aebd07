import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import type { Db, Statement } from '../database/db.js';
import type { PeriodicJobs } from '../database/periodic.js';
import type { MetricsService } from '../metrics/metrics.service.js';
import type { RefundService } from '../orders/cancel/refund.service.js';
import type { OrderStore } from '../orders/state/order-store.js';
import type { GatewayPayment } from '../payments/gateway.types.js';
import type { PaymentGateway } from '../payments/payment-gateway.js';
import type { SentOrder } from './mismatch.js';
import { ReconciliationService } from './reconciliation.service.js';

const sent = (id: string, o: Partial<SentOrder> = {}): SentOrder => ({
  id,
  status: 'CONFIRM_SUCCESS',
  force_confirmed: false,
  refund_status: null,
  created_at: `2030-01-01 00:00:${id}`,
  refund_watching: false,
  amount_minor: '500',
  payment_status: null,
  payment_id: null,
  ...o,
});
const capture = (amountMinor: number): GatewayPayment => ({ id: `p-${amountMinor}`, status: 'succeeded', amountMinor, currency: 'USD', reference: 'r', refundedMinor: 0 });

/**
 * Reconciliation's collaborators, faked: the database answers pages of sent orders (`pages`, in
 * turn, each call's cursor recorded) and flags every order asked; the gateway answers from
 * `payments` (no entry: it cannot be asked); refunds and counters record what they are told.
 */
function reconciliation(pages: SentOrder[][], payments: Record<string, GatewayPayment[]>) {
  const cursors: unknown[] = [];
  const flagged: unknown[][] = [];
  const refunds: string[] = [];
  const counted: unknown[] = [];
  let page = 0;
  const db = {
    sql: {
      rows: async (stmt: Statement, p: unknown[]) => {
        if (stmt.name !== 'recovery_sent_page') throw new Error(`unexpected ${stmt.name}`);
        cursors.push([p[2], p[3]]);
        return pages[page++] ?? [];
      },
      one: async (stmt: Statement, p: unknown[]) => {
        if (stmt.name !== 'orders_flag_attention') throw new Error(`unexpected ${stmt.name}`);
        flagged.push(p);
        return { flagged: true };
      },
    },
  } as unknown as Db;
  const gateway = {
    lookup: async (id: string) => {
      if (!payments[id]) throw new Error('gateway down');
      return payments[id];
    },
  } as unknown as PaymentGateway;
  const refundService = { owe: async (id: string, why: string) => void refunds.push(`owe ${id}: ${why}`), process: async (id: string) => void refunds.push(`process ${id}`) } as unknown as RefundService;
  const counter = (name: string) => ({ inc: (labels: unknown) => void counted.push({ [name]: labels }) });
  const metrics = { reconciliationFixes: counter('fixes'), needsAttention: counter('attention') } as unknown as MetricsService;
  const periodic = { register: () => undefined, stopped: () => false } as unknown as PeriodicJobs;
  const config = { runsWorkers: false, env: {} } as unknown as AppConfig;
  const store = { apply: async () => ({}) } as unknown as OrderStore;
  return { service: new ReconciliationService(db, refundService, store, gateway, metrics, periodic, config), cursors, flagged, refunds, counted };
}

describe('ReconciliationService.run', () => {
  beforeAll(() => Logger.overrideLogger(false));

  const orders = [sent('01'), sent('02'), sent('03', { status: 'CANCELED' }), sent('04', { status: 'CANCELED', refund_watching: true }), sent('05')];
  const payments = { '01': [capture(500)], '02': [], '03': [capture(300)], '04': [capture(300)] };

  it('GET only reports: the mismatches, the orders checked, those the gateway could not be asked about', async () => {
    const r = reconciliation([orders], payments);
    await expect(r.service.run(60_000, false)).resolves.toEqual({
      checked: 4,
      mismatches: [
        { orderId: '02', kind: 'no_capture', detail: 'confirmed, but the gateway has no capture' },
        { orderId: '03', kind: 'charged_after_release', detail: 'CANCELED, but 300 is still captured' },
      ],
      truncated: false,
      unreachable: ['05'],
    });
    expect([r.flagged, r.refunds, r.counted]).toEqual([[], [], []]);
  });

  it('POST acts: money left on a released order is owed back and refunded, and every mismatch is flagged for a human', async () => {
    const r = reconciliation([orders], payments);
    await r.service.run(60_000, true);
    expect(r.refunds).toEqual(['owe 03: reconciliation found 300 captured on a CANCELED order', 'process 03']);
    expect(r.flagged.map((p) => p.slice(0, 2)).sort()).toEqual([
      ['02', 'reconciliation_mismatch'],
      ['03', 'reconciliation_mismatch'],
    ]);
    expect(r.counted).toEqual(expect.arrayContaining([{ fixes: { kind: 'refund_issued' } }, { fixes: { kind: 'mismatch' } }, { attention: { reason: 'reconciliation_mismatch' } }]));
  });

  it('goes page by page after the last order of each page, until a short page', async () => {
    const full = (from: number) => Array.from({ length: 200 }, (_, i) => sent(String(from + i).padStart(4, '0')));
    const pages = [full(0), full(200), [sent('9999')]];
    const everyone = Object.fromEntries(pages.flat().map((o) => [o.id, [capture(1)]]));
    const r = reconciliation(pages, everyone);
    await expect(r.service.run(60_000, false)).resolves.toMatchObject({ checked: 401, mismatches: [], truncated: false });
    expect(r.cursors).toEqual([
      [null, null],
      ['2030-01-01 00:00:0199', '0199'],
      ['2030-01-01 00:00:0399', '0399'],
    ]);
  });

  it('an on-demand pass stops before it would pass 5000 orders, and says it was truncated', async () => {
    const pages = Array.from({ length: 30 }, (_, p) => Array.from({ length: 200 }, (_, i) => sent(`${p}-${i}`)));
    const r = reconciliation(pages, Object.fromEntries(pages.flat().map((o) => [o.id, [capture(1)]])));
    await expect(r.service.run(60_000, false)).resolves.toMatchObject({ checked: 5000, truncated: true });
    expect(r.cursors).toHaveLength(26);
  });
});
