import { randomUUID } from 'node:crypto';
import { resendWhileBusy, waitFor } from './support/http.js';
import { useHarness } from './support/harness.js';
import { expectProblem, expectValidation } from './support/problem.js';

/**
 * The inventory consistency check over HTTP (API.md, "Consistency"): nothing reported while orders
 * run; a stock row broken behind the service's back (reserved, and on hand with the ledger's
 * triggers switched off for that one statement) is found, counted by the scheduled check into
 * tcc_inventory_mismatches, and repaired with a reason — reserved set to what is held, a `repair`
 * movement of on hand − ledger, an audit entry — after which the check reports nothing.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000', RECONCILE_INTERVAL_MS: '1000' });
const tag = randomUUID().slice(0, 6);

const check = () => h.api.get('/admin/inventory/consistency', true);

async function mismatchGauge(): Promise<number> {
  const text = (await h.api.get('/metrics')).body as string;
  return Number(/^tcc_inventory_mismatches (\d+)$/m.exec(text)?.[1]);
}

it('no false mismatch while orders run: Trys, Confirms, Cancels and adjustments beside repeated checks', async () => {
  const skus = Array.from({ length: 4 }, (_, i) => `CON-${tag}-${i}`);
  for (const sku of skus) expect((await h.api.putSku(sku, 500)).status).toBe(200);
  let running = true;
  const checks: number[] = [];
  const checker = (async () => {
    while (running) {
      const res = await check();
      expect(res.status).toBe(200);
      expect(res.body.mismatches).toEqual([]);
      checks.push(res.body.checked);
    }
  })();
  // The checker stops with the orders, whether they pass or fail (it must not outlive this test).
  await Promise.all(
    Array.from({ length: 60 }, async (_, i) => {
      const sku = skus[i % skus.length];
      // Sixty at once on four rows: on a loaded machine a lock may wait past lock_timeout, answered
      // 503 busy (nothing changed); sent again as the contract asks (same Idempotency-Key).
      const key = randomUUID();
      const order = await resendWhileBusy(() => h.api.order(key, { customerId: `c-${i}`, items: [{ sku, quantity: 1 + (i % 3) }, { sku: skus[(i + 1) % skus.length], quantity: 1 }] }));
      expect(order.status).toBe(201);
      // 200, or 202 CONFIRM_PENDING when the gateway answered later than PAYMENT_TIMEOUT_MS on a loaded machine.
      if (i % 3 === 0) expect([200, 202]).toContain((await resendWhileBusy(() => h.api.post(`/orders/${order.body.id}/confirm`, { paymentToken: 'tok_ok' }))).status);
      else if (i % 3 === 1) expect((await resendWhileBusy(() => h.api.post(`/orders/${order.body.id}/cancel`))).status).toBe(200);
      const adjustment = { delta: 1, reason: 'received', reference: `con-${tag}-${i}` };
      expect((await resendWhileBusy(() => h.api.send('POST', `/admin/inventory/${sku}/adjustments`, { body: adjustment, admin: true, headers: { 'idempotency-key': `con-${tag}-${i}` } }))).status).toBe(201);
    }),
  ).finally(() => (running = false));
  await checker;
  expect(checks.length).toBeGreaterThan(0);
  expect(checks.every((n) => n >= skus.length)).toBe(true);
  await waitFor('the scheduled check to have run', async () => (await h.db.query(`SELECT 1 FROM job_state WHERE name = 'inventory-consistency'`)).length > 0);
  expect(await mismatchGauge()).toBe(0);
});

it('a row broken directly is found, counted by the scheduled check, and repaired with a reason and an audit entry', async () => {
  const sku = `BRK-${tag}`;
  expect((await h.api.putSku(sku, 10)).status).toBe(200);
  const held = await h.api.order(randomUUID(), { customerId: 'c-brk', items: [{ sku, quantity: 2 }] });
  expect(held.status).toBe(201);
  // Reserved off by 3, and on hand changed without a movement (the ledger's triggers off for it).
  await h.db.query(`UPDATE stock SET reserved = reserved + 3 WHERE sku = $1 AND location_id = 'default'`, [sku]);
  await h.db.query(`BEGIN; SET LOCAL session_replication_role = replica; UPDATE stock SET on_hand = on_hand + 4 WHERE sku = '${sku}' AND location_id = 'default'; COMMIT;`);

  const found = await check();
  expect(found.status).toBe(200);
  const broken = { sku, locationId: 'default', reserved: 5, held: 2, onHand: 14, ledger: 10 };
  expect(found.body.mismatches).toEqual([broken]);
  await waitFor('the gauge to count it', async () => (await mismatchGauge()) === 1, 10_000);

  expectValidation(await h.api.admin('POST', '/admin/inventory/consistency/repair', {}), /^reason$/);
  expectValidation(await h.api.admin('POST', '/admin/inventory/consistency/repair', { reason: '' }), /^reason$/);
  expectProblem(await h.api.post('/admin/inventory/consistency/repair', { reason: 'x' }), 401, 'UNAUTHORIZED');
  expect((await check()).body.mismatches).toEqual([broken]);

  const repaired = await h.api.admin('POST', '/admin/inventory/consistency/repair', { reason: 'cycle count after a manual fix' });
  expect(repaired.status).toBe(200);
  expect(repaired.body).toEqual({ repaired: 1, mismatches: [broken] });
  expect((await check()).body.mismatches).toEqual([]);
  expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ onHand: 14, reserved: 2, available: 12 });
  const moves = (await h.api.get(`/admin/inventory/${sku}/movements`, true)).body.data;
  expect(moves[0]).toMatchObject({ kind: 'repair', delta: 4, onHandAfter: 14, reason: 'cycle count after a manual fix', actor: 'admin', operator: null });
  const audit = await h.db.query<{ action: string; actor: string; reason: string; data: { repaired: number; mismatches: unknown[] } }>(
    `SELECT action, actor, reason, data FROM admin_audit WHERE action = 'inventory.repair' ORDER BY id DESC LIMIT 1`,
  );
  expect(audit).toEqual([{ action: 'inventory.repair', actor: 'admin', reason: 'cycle count after a manual fix', data: { repaired: 1, mismatches: [broken] } }]);
  await waitFor('the gauge back at 0', async () => (await mismatchGauge()) === 0, 10_000);

  // Nothing to repair: 0, and the order sells what it held.
  expect((await h.api.admin('POST', '/admin/inventory/consistency/repair', { reason: 'again' })).body).toEqual({ repaired: 0, mismatches: [] });
  expect((await h.api.post(`/orders/${held.body.id}/confirm`, { paymentToken: 'tok_ok' })).status).toBe(200);
  expect((await h.api.get(`/inventory/${sku}`)).body).toMatchObject({ onHand: 12, reserved: 0 });
  expect((await check()).body.mismatches).toEqual([]);
});
