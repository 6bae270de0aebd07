import { randomUUID } from 'node:crypto';
import { startSimulator, type SimMode, type SimulatorHandle } from './support/simulator.js';

describe('gateway simulator over HTTP', () => {
  let sim: SimulatorHandle;

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterAll(async () => {
    await sim.close();
  });
  beforeEach(async () => {
    await sim.reset();
  });

  const order = (reference = `ord-${randomUUID()}`) => ({ amountMinor: 2500, currency: 'EUR', reference });

  async function post(path: string, body: unknown, key?: string, signal?: AbortSignal) {
    const res = await fetch(`${sim.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  const charge = (body: unknown, key: string, signal?: AbortSignal) => post('/payments', body, key, signal);

  it('charges once and replays the first answer for the same key', async () => {
    const body = order();
    const first = await charge(body, 'k-1');
    expect(first).toEqual({
      status: 201,
      body: { id: expect.stringMatching(/^pay_/), status: 'succeeded', ...body, refundedMinor: 0 },
    });
    const again = await charge(body, 'k-1');
    expect(again).toEqual(first);
    expect(await sim.chargesFor(body.reference)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 2500 });
    expect((await sim.ledger()).chargeRequests).toBe(2);
  });

  it('rejects the same key with a different body', async () => {
    const body = order();
    await charge(body, 'k-2');
    expect((await charge({ ...body, amountMinor: 1 }, 'k-2')).status).toBe(422);
  });

  it('declines tok_decline with 402 and replays the decline', async () => {
    const body = { ...order(), paymentToken: 'tok_decline' };
    const first = await charge(body, 'k-3');
    expect(first.status).toBe(402);
    expect(first.body).toMatchObject({ status: 'declined', refundedMinor: 0 });
    expect(await charge(body, 'k-3')).toEqual(first);
    expect(await sim.chargesFor(body.reference)).toEqual({ succeeded: 0, declined: 1, netCapturedMinor: 0 });
  });

  it('looks payments up by reference', async () => {
    const body = order();
    const declined = await charge({ ...body, paymentToken: 'tok_decline' }, 'k-4a');
    const ok = await charge(body, 'k-4b');
    await charge(order(), 'k-4c');
    const res = await fetch(`${sim.url}/payments?reference=${encodeURIComponent(body.reference)}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: [declined.body, ok.body] });
  });

  it('refunds partially and fully, rejects over-refunds and replays by key', async () => {
    const body = order();
    const { body: payment } = await charge(body, 'k-5');
    const refunds = `/payments/${String(payment.id)}/refunds`;
    const partial = await post(refunds, { amountMinor: 1000 }, 'r-1');
    expect(partial).toEqual({
      status: 201,
      body: { id: expect.stringMatching(/^re_/), paymentId: payment.id, status: 'succeeded', amountMinor: 1000 },
    });
    expect(await post(refunds, { amountMinor: 1000 }, 'r-1')).toEqual(partial);
    expect((await post(refunds, { amountMinor: 1501 }, 'r-2')).status).toBe(422);
    expect((await post(refunds, { amountMinor: 1500 }, 'r-2')).status).toBe(201);
    expect(await sim.chargesFor(body.reference)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 0 });
    expect((await post(refunds, { amountMinor: 1 }, 'r-3')).status).toBe(422);
    expect((await post('/payments/pay_missing/refunds', { amountMinor: 1 }, 'r-4')).status).toBe(404);
    expect((await sim.ledger()).refunds).toHaveLength(2);
  });

  it('rejects refunds of declined payments', async () => {
    const { body: payment } = await charge({ ...order(), paymentToken: 'tok_decline' }, 'k-6');
    expect((await post(`/payments/${String(payment.id)}/refunds`, { amountMinor: 1 }, 'r-5')).status).toBe(422);
  });

  it.each([
    ['error', 500],
    ['rate_limit', 429],
  ] as const)('script %s answers %i without charging; the retry charges once', async (mode, status) => {
    const body = order();
    await sim.script([mode]);
    expect((await charge(body, 'k-7')).status).toBe(status);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 0 });
    expect((await charge(body, 'k-7')).status).toBe(201);
    expect((await charge(body, 'k-7')).status).toBe(201);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
  });

  it.each([400, 401, 403, 404, 422])('refuse_%i answers that status without charging, then the next charge goes through', async (status) => {
    const body = order();
    await sim.script([`refuse_${status}` as SimMode]);
    const refused = await charge({ ...body, paymentToken: 'tok_r' }, `k-r${status}`);
    expect(refused).toEqual({ status, body: { error: 'refused', message: expect.stringContaining(String(status)) } });
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 0, declined: 0 });
    expect((await sim.ledger()).chargeAttempts).toEqual([{ reference: body.reference, paymentToken: 'tok_r' }]);
    expect((await charge({ ...body, paymentToken: 'tok_r' }, `k-r${status}`)).status).toBe(201);
  });

  it('slow_ok charges only when its wait is over; a duplicate sent meanwhile gets the same payment', async () => {
    const body = order();
    await sim.setFaults({ hangMs: 400, script: ['slow_ok'] });
    const started = Date.now();
    const first = charge(body, 'k-slow');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 0 });
    const duplicate = charge(body, 'k-slow');
    const [a, b] = await Promise.all([first, duplicate]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
  });

  it('slow_ok does not charge for a client that left during its wait; the next request is served as usual', async () => {
    const body = order();
    await sim.setFaults({ hangMs: 300, script: ['slow_ok'] });
    const gone = new AbortController();
    const left = charge(body, 'k-left', gone.signal).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 100));
    gone.abort();
    expect(await left).toMatchObject({ name: 'AbortError' });
    await new Promise((resolve) => setTimeout(resolve, 400)); // past the wait's end
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 0 });
    const again = await charge(body, 'k-left');
    expect(again.status).toBe(201);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
  });

  it('charge_then_error records the charge and the retry replays it', async () => {
    const body = order();
    await sim.script(['charge_then_error']);
    expect((await charge(body, 'k-8')).status).toBe(500);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
    const retry = await charge(body, 'k-8');
    expect(retry.status).toBe(201);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
  });

  it('charge_then_hang records the charge while the client times out', async () => {
    const body = order();
    await sim.setFaults({ hangMs: 2000 });
    await sim.script(['charge_then_hang']);
    await expect(charge(body, 'k-9', AbortSignal.timeout(200))).rejects.toThrow();
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
    expect((await charge(body, 'k-9')).status).toBe(201);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
  });

  it('hang answers 504 after hangMs without charging', async () => {
    const body = order();
    await sim.setFaults({ hangMs: 50, script: ['hang'] });
    expect((await charge(body, 'k-10')).status).toBe(504);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 0 });
  });

  it('answers 503 on every payments route while down, and control still works', async () => {
    const body = order();
    const { body: payment } = await charge(body, 'k-11');
    await sim.setFaults({ down: true });
    expect((await charge(order(), 'k-12')).status).toBe(503);
    expect((await fetch(`${sim.url}/payments?reference=${body.reference}`)).status).toBe(503);
    expect((await post(`/payments/${String(payment.id)}/refunds`, { amountMinor: 1 }, 'r-6')).status).toBe(503);
    expect((await sim.ledger()).payments).toHaveLength(1);
  });

  it('honours lookupDown and refundDown separately', async () => {
    const body = order();
    const { body: payment } = await charge(body, 'k-13');
    await sim.setFaults({ lookupDown: true, refundDown: true });
    expect((await fetch(`${sim.url}/payments?reference=${body.reference}`)).status).toBe(503);
    expect((await post(`/payments/${String(payment.id)}/refunds`, { amountMinor: 1 }, 'r-7')).status).toBe(503);
    expect((await charge(order(), 'k-14')).status).toBe(201);
  });

  it('charges exactly once for 12 concurrent requests with one key', async () => {
    const body = order();
    await sim.setFaults({ latencyMs: 30 });
    const results = await Promise.all(Array.from({ length: 12 }, () => charge(body, 'k-15')));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await sim.chargesFor(body.reference)).toMatchObject({ succeeded: 1 });
  });

  it('rejects malformed JSON, missing keys and invalid bodies with 400', async () => {
    expect((await charge('{"amountMinor":', 'k-16')).status).toBe(400);
    expect((await post('/payments', order())).status).toBe(400);
    expect((await charge({ ...order(), amountMinor: 10.5 }, 'k-17')).status).toBe(400);
    expect((await charge({ ...order(), currency: 'euro' }, 'k-18')).status).toBe(400);
    expect((await post('/payments', 'x'.repeat(70 * 1024), 'k-19')).status).toBe(413);
    expect((await sim.ledger()).payments).toHaveLength(0);
  });

  it('validates control input and serves health and 404s', async () => {
    await expect(sim.setFaults({ errorRate: 2 })).rejects.toThrow(/400/);
    await expect(sim.script(['nope' as never])).rejects.toThrow(/400/);
    expect(await (await fetch(`${sim.url}/health`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${sim.url}/nowhere`)).status).toBe(404);
  });

  it('reset restores defaults and clears the ledger', async () => {
    await sim.setFaults({ latencyMs: 5, down: true, script: ['error'] });
    await sim.reset();
    const faults = await (await fetch(`${sim.url}/__control/faults`)).json();
    expect(faults).toMatchObject({ latencyMs: 0, down: false, script: [], hangMs: 30000 });
    expect(await sim.ledger()).toEqual({
      payments: [],
      refunds: [],
      captures: [],
      voids: [],
      chargeRequests: 0,
      chargeAttempts: [],
      authorizeAttempts: [],
      captureRequests: 0,
      voidRequests: 0,
    });
  });

  it('closes promptly while a request is hanging', async () => {
    const other = await startSimulator({ hangMs: 30_000, script: ['hang'] });
    const pending = fetch(`${other.url}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k-20' },
      body: JSON.stringify(order()),
    }).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(1000);
    // fetch's TypeError comes from another realm under jest's VM, so match by shape.
    expect(await pending).toMatchObject({ message: 'fetch failed' });
  });
});
