import { randomBytes, randomUUID } from 'node:crypto';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';

/**
 * The participant API as an outside coordinator uses it. This file plays DTM's side of the TCC
 * protocol: one body sent to every phase (Try's items and timeoutMs included), 200 = success,
 * 409 = a definite refusal (roll back, do not retry), anything else = retry the same phase.
 * And what DTM cannot do for itself when it dies: the branch's timeout.
 */
const h = useHarness({ PARTICIPANT_TTL_MS: '60000', SWEEP_INTERVAL_MS: '200' });

async function newSku(onHand: number): Promise<string> {
  const sku = `DTM-${randomBytes(4).toString('hex')}`;
  expect((await h.api.putSku(sku, onHand)).status).toBe(200);
  return sku;
}
const stock = async (sku: string) => (await h.api.get(`/inventory/${sku}`)).body as { onHand: number; reserved: number };

/** A minimal DTM-style global transaction over branches of this participant. */
async function dtm(branches: { items: { sku: string; quantity: number }[]; timeoutMs?: number }[], opts: { dieAfterTry?: boolean } = {}) {
  const gid = randomUUID();
  const bodies = branches.map((b, i) => ({ transactionId: `${gid}-${i}`, items: b.items, ...(b.timeoutMs ? { timeoutMs: b.timeoutMs } : {}) }));
  const phase = async (op: string, body: unknown) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await h.api.send('POST', `/tcc/inventory/${op}`, { body, admin: true });
      if (res.status === 200 || res.status === 409) return res;
    }
    throw new Error(`${op} never got a definite answer`);
  };
  const tries = [];
  for (const body of bodies) tries.push(await phase('try', body));
  if (opts.dieAfterTry) return { gid, bodies, tries, outcome: 'abandoned' as const };
  const failed = tries.some((t) => t.status === 409);
  // DTM sends the Try's body again to Confirm or Cancel, and repeats it until it is answered.
  const finals = [];
  for (const body of bodies) finals.push(await phase(failed ? 'cancel' : 'confirm', body));
  for (const body of bodies) finals.push(await phase(failed ? 'cancel' : 'confirm', body)); // a duplicate delivery
  return { gid, bodies, tries, finals, outcome: failed ? ('rolled back' as const) : ('committed' as const) };
}

it('commits two branches: stock sold once, repeats answered CONFIRMED', async () => {
  const [a, b] = [await newSku(10), await newSku(10)];
  const run = await dtm([{ items: [{ sku: a, quantity: 2 }] }, { items: [{ sku: b, quantity: 3 }, { sku: a, quantity: 1 }] }]);
  expect(run.outcome).toBe('committed');
  expect(run.finals!.map((f) => [f.status, f.body.status])).toEqual(Array(4).fill([200, 'CONFIRMED']));
  expect(await stock(a)).toMatchObject({ onHand: 7, reserved: 0 });
  expect(await stock(b)).toMatchObject({ onHand: 7, reserved: 0 });
});

it('rolls back when one Try is refused with 409: the reserved branch is released, the refused one is an empty rollback', async () => {
  const [a, b] = [await newSku(10), await newSku(1)];
  const run = await dtm([{ items: [{ sku: a, quantity: 4 }] }, { items: [{ sku: b, quantity: 5 }] }]);
  expect(run.outcome).toBe('rolled back');
  expect(run.tries.map((t) => [t.status, t.body.code ?? t.body.status])).toEqual([
    [200, 'RESERVED'],
    [409, 'INSUFFICIENT_STOCK'],
  ]);
  expect(run.finals!.every((f) => f.status === 200 && f.body.status === 'CANCELED')).toBe(true);
  expect(await stock(a)).toMatchObject({ onHand: 10, reserved: 0 });
  expect(await stock(b)).toMatchObject({ onHand: 1, reserved: 0 });
});

it('an unknown SKU or a currency mismatch is a definite 409 on /tcc/* too, so DTM rolls back', async () => {
  const a = await newSku(5);
  const run = await dtm([{ items: [{ sku: a, quantity: 1 }] }, { items: [{ sku: `NOPE-${randomUUID()}`, quantity: 1 }] }]);
  expect(run.tries[1]).toMatchObject({ status: 409, body: { code: 'UNKNOWN_SKU' } });
  expect(run.outcome).toBe('rolled back');
  expect(await stock(a)).toMatchObject({ reserved: 0 });
});

it('a coordinator that dies after Try cannot hold stock: the branch is canceled at its timeout, a late Confirm is refused', async () => {
  const a = await newSku(10);
  const expired = async () => Number(/^tcc_participant_branches_expired_total\{result="canceled"\} (\S+)$/m.exec((await h.api.get('/metrics')).body as string)?.[1] ?? NaN);
  const expiredBefore = await expired();
  const run = await dtm([{ items: [{ sku: a, quantity: 6 }], timeoutMs: 1000 }], { dieAfterTry: true });
  expect(run.tries[0]).toMatchObject({ status: 200, body: { status: 'RESERVED' } });
  expect(await stock(a)).toMatchObject({ reserved: 6 });
  const listed = await h.api.admin('GET', `/admin/participant/transactions?status=RESERVED`);
  expect(listed.body.data).toContainEqual(expect.objectContaining({ transactionId: run.bodies[0].transactionId, status: 'RESERVED', items: [{ sku: a, quantity: 6, allocations: [{ locationId: 'default', quantity: 6 }] }] }));
  await waitFor('the branch to be canceled by its timeout', async () => (await stock(a)).reserved === 0, 10_000);
  const late = await h.api.send('POST', '/tcc/inventory/confirm', { body: run.bodies[0], admin: true });
  expect(late).toMatchObject({ status: 409, body: { code: 'TRANSACTION_CANCELED' } });
  const again = await h.api.send('POST', '/tcc/inventory/try', { body: run.bodies[0], admin: true });
  expect(again).toMatchObject({ status: 409, body: { code: 'TRANSACTION_CANCELED' } });
  const canceled = await h.api.admin('GET', `/admin/participant/transactions?status=CANCELED`);
  expect(canceled.body.data.map((b: any) => b.transactionId)).toContain(run.bodies[0].transactionId);
  const metrics = (await h.api.get('/metrics')).body as string;
  expect(metrics).toMatch(/tcc_participant_branches_expired_total\{result="canceled"\} [1-9]/);
  // Once: the bucket job and the sweeper may both find it due; only the one that canceled it counts.
  await new Promise((r) => setTimeout(r, 1500));
  expect(await expired()).toBe(expiredBefore + 1);
});

it('a branch confirmed before its timeout stays confirmed', async () => {
  const a = await newSku(10);
  const body = { transactionId: randomUUID(), items: [{ sku: a, quantity: 2 }], timeoutMs: 1500 };
  expect((await h.api.send('POST', '/tcc/inventory/try', { body, admin: true })).status).toBe(200);
  expect((await h.api.send('POST', '/tcc/inventory/confirm', { body, admin: true })).body.status).toBe('CONFIRMED');
  await new Promise((r) => setTimeout(r, 2500));
  expect(await stock(a)).toMatchObject({ onHand: 8, reserved: 0 });
  expect((await h.api.send('POST', '/tcc/inventory/cancel', { body, admin: true })).body.code).toBe('TRANSACTION_CONFIRMED');
});

it('timeoutMs is bounded: below 1000 or above RESERVATION_MAX_TTL_MS is VALIDATION_FAILED, and nothing is reserved', async () => {
  const a = await newSku(10);
  for (const timeoutMs of [999, 3_600_001, 1.5, '2000']) {
    const res = await h.api.send('POST', '/tcc/inventory/try', { body: { transactionId: randomUUID(), items: [{ sku: a, quantity: 1 }], timeoutMs }, admin: true });
    expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  }
  expect(await stock(a)).toMatchObject({ reserved: 0 });
});

it('the oldest reserved branch shows in the metrics', async () => {
  const a = await newSku(10);
  expect((await h.api.send('POST', '/tcc/inventory/try', { body: { transactionId: randomUUID(), items: [{ sku: a, quantity: 1 }] }, admin: true })).status).toBe(200);
  const age = async () => Number(/^tcc_participant_oldest_reserved_age_seconds (\S+)$/m.exec((await h.api.get('/metrics')).body as string)?.[1]);
  await waitFor('the oldest reserved branch to be a second old', async () => (await age()) >= 1, 10_000, 100);
  expect(await age()).toBeGreaterThanOrEqual(1);
});
