import { randomUUID } from 'node:crypto';
import { startSimulator, type SimMode, type SimulatorHandle } from './support/simulator.js';

/**
 * The simulator's authorizations over HTTP (API.md, "Outbound payment-gateway protocol"):
 * `capture: false`, capture, void, their keys, expiry, their scripted faults and the ledger.
 */
describe('gateway simulator: authorize, capture, void', () => {
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
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }
  const authorize = (body: Record<string, unknown>, key: string, signal?: AbortSignal) => post('/payments', { ...body, capture: false }, key, signal);
  const capture = (id: string, amountMinor: number, key: string, signal?: AbortSignal) => post(`/payments/${id}/capture`, { amountMinor }, key, signal);
  const voidHold = (id: string, key: string) => post(`/payments/${id}/void`, undefined, key);

  it('authorizes with capture: false (201 authorized, capturedMinor 0, an expiry SIM_AUTH_TTL_MS ahead), replaying its first answer by key', async () => {
    const body = order();
    const before = Date.now();
    const first = await authorize(body, 'a-1');
    expect(first).toEqual({
      status: 201,
      body: { id: expect.stringMatching(/^pay_/), status: 'authorized', ...body, refundedMinor: 0, capturedMinor: 0, authorizationExpiresAt: expect.any(String) },
    });
    const ttl = Date.parse(first.body.authorizationExpiresAt) - before;
    expect(ttl).toBeGreaterThan(7 * 24 * 3600_000 - 5000);
    expect(ttl).toBeLessThanOrEqual(7 * 24 * 3600_000 + 5000);
    expect(await authorize(body, 'a-1')).toEqual(first);
    expect((await post('/payments', body, 'a-1')).status).toBe(422); // the key was an authorization's
    expect(await sim.holdsFor(body.reference)).toEqual({ authorizations: 1, open: 1, captures: 0, netCapturedMinor: 0 });
    expect((await sim.ledger()).authorizeAttempts).toHaveLength(2);
  });

  it('declines tok_decline (402) and nothing is held', async () => {
    const body = { ...order(), paymentToken: 'tok_decline' };
    const res = await authorize(body, 'a-2');
    expect(res.status).toBe(402);
    expect(res.body.status).toBe('declined');
    expect(await sim.holdsFor(body.reference)).toEqual({ authorizations: 0, open: 0, captures: 0, netCapturedMinor: 0 });
  });

  it('captures at most what was authorized, once, replaying by key; a second capture or a void then answers 409 succeeded', async () => {
    const body = order();
    const { body: p } = await authorize(body, 'a-3');
    expect((await capture(p.id, 2501, 'c-3')).status).toBe(422);
    const captured = await capture(p.id, 2000, 'c-3');
    expect(captured).toEqual({ status: 200, body: { ...p, status: 'succeeded', capturedMinor: 2000 } });
    expect(await capture(p.id, 2000, 'c-3')).toEqual(captured);
    expect((await capture(p.id, 1000, 'c-3')).status).toBe(422); // the key with another amount
    expect(await capture(p.id, 2000, 'c-3b')).toMatchObject({ status: 409, body: { status: 'succeeded' } });
    expect(await voidHold(p.id, 'v-3')).toMatchObject({ status: 409, body: { status: 'succeeded' } });
    expect(await sim.holdsFor(body.reference)).toEqual({ authorizations: 1, open: 0, captures: 1, netCapturedMinor: 2000 });
    expect(await sim.chargesFor(body.reference)).toEqual({ succeeded: 1, declined: 0, netCapturedMinor: 2000 });
    // What was captured can be refunded, and no more.
    expect((await post(`/payments/${p.id}/refunds`, { amountMinor: 2001 }, 'r-3')).status).toBe(422);
    expect((await post(`/payments/${p.id}/refunds`, { amountMinor: 2000 }, 'r-3')).status).toBe(201);
    expect(await sim.holdsFor(body.reference)).toMatchObject({ netCapturedMinor: 0 });
    expect((await sim.ledger()).captures).toEqual([{ paymentId: p.id, amountMinor: 2000 }]);
  });

  it('voids an open hold (200, again 200), after which a capture answers 409 voided', async () => {
    const body = order();
    const { body: p } = await authorize(body, 'a-4');
    const voided = await voidHold(p.id, 'v-4');
    expect(voided).toEqual({ status: 200, body: { ...p, status: 'voided' } });
    expect(await voidHold(p.id, 'v-4')).toEqual(voided);
    expect(await capture(p.id, 2500, 'c-4')).toMatchObject({ status: 409, body: { status: 'voided', capturedMinor: 0 } });
    expect(await sim.holdsFor(body.reference)).toEqual({ authorizations: 1, open: 0, captures: 0, netCapturedMinor: 0 });
    expect((await post('/payments/pay_nope/void', undefined, 'v-x')).status).toBe(404);
    expect((await post(`/payments/${p.id}/void`, undefined)).status).toBe(400); // no key
  });

  it('an authorization past SIM_AUTH_TTL_MS (authTtlMs) is expired: lookups say so, a capture answers 409 expired, a void 409 expired', async () => {
    await sim.setFaults({ authTtlMs: 150 });
    const body = order();
    const { body: p } = await authorize(body, 'a-5');
    await new Promise((r) => setTimeout(r, 250));
    const looked = (await (await fetch(`${sim.url}/payments?reference=${body.reference}`)).json()) as { data: unknown[] };
    expect(looked.data).toEqual([{ ...p, status: 'expired' }]);
    expect(await capture(p.id, 2500, 'c-5')).toMatchObject({ status: 409, body: { status: 'expired' } });
    expect(await voidHold(p.id, 'v-5')).toMatchObject({ status: 409, body: { status: 'expired' } });
    expect(await sim.holdsFor(body.reference)).toEqual({ authorizations: 1, open: 0, captures: 0, netCapturedMinor: 0 });
  });

  it.each([
    ['authorize_then_error', 500],
    ['charge_then_error', 500],
  ] as const)('%s holds the money and answers %i; the retry with the key replays the authorization', async (mode, status) => {
    const body = order();
    await sim.script([mode]);
    expect((await authorize(body, 'a-6')).status).toBe(status);
    expect(await sim.holdsFor(body.reference)).toMatchObject({ open: 1 });
    expect(await authorize(body, 'a-6')).toMatchObject({ status: 201, body: { status: 'authorized' } });
    expect(await sim.holdsFor(body.reference)).toMatchObject({ authorizations: 1, open: 1 });
  });

  it('authorize_then_hang holds the money while the client times out', async () => {
    const body = order();
    await sim.setFaults({ hangMs: 2000, script: ['authorize_then_hang'] });
    await expect(authorize(body, 'a-7', AbortSignal.timeout(200))).rejects.toThrow();
    expect(await sim.holdsFor(body.reference)).toMatchObject({ open: 1 });
  });

  it.each([
    ['error', 500, 0],
    ['rate_limit', 429, 0],
    ['hang', 504, 0],
    ['refuse_422', 422, 0],
    ['capture_then_error', 500, 1],
  ] as const)('captureScript %s answers %i, captures %i; the retry with the key ends captured once', async (mode, status, captured) => {
    await sim.setFaults({ hangMs: 50 });
    const body = order();
    const { body: p } = await authorize(body, 'a-8');
    await sim.script([mode as SimMode], 'captureScript');
    expect((await capture(p.id, 2500, 'c-8')).status).toBe(status);
    expect(await sim.holdsFor(body.reference)).toMatchObject({ captures: captured });
    expect(await capture(p.id, 2500, 'c-8')).toMatchObject({ status: 200, body: { status: 'succeeded' } });
    expect(await sim.holdsFor(body.reference)).toEqual({ authorizations: 1, open: 0, captures: 1, netCapturedMinor: 2500 });
  });

  it('capture_then_hang captures while the client times out; expired makes the hold expire now (409 expired)', async () => {
    await sim.setFaults({ hangMs: 2000 });
    const a = order();
    const { body: p } = await authorize(a, 'a-9');
    await sim.script(['capture_then_hang'], 'captureScript');
    await expect(capture(p.id, 2500, 'c-9', AbortSignal.timeout(200))).rejects.toThrow();
    expect(await sim.holdsFor(a.reference)).toMatchObject({ captures: 1, open: 0 });
    const b = order();
    const { body: q } = await authorize(b, 'a-9b');
    await sim.script(['expired'], 'captureScript');
    expect(await capture(q.id, 2500, 'c-9b')).toMatchObject({ status: 409, body: { status: 'expired' } });
    expect(await sim.holdsFor(b.reference)).toEqual({ authorizations: 1, open: 0, captures: 0, netCapturedMinor: 0 });
  });

  it.each([
    ['error', 500, 1],
    ['hang', 504, 1],
    ['void_then_error', 500, 0],
    ['expired', 409, 0],
  ] as const)('voidScript %s answers %i, leaving %i open', async (mode, status, open) => {
    await sim.setFaults({ hangMs: 50 });
    const body = order();
    const { body: p } = await authorize(body, 'a-10');
    await sim.script([mode as SimMode], 'voidScript');
    expect((await voidHold(p.id, 'v-10')).status).toBe(status);
    expect(await sim.holdsFor(body.reference)).toMatchObject({ open });
  });

  it('captureDown and voidDown answer 503 on their call only; a script with unknown modes is refused', async () => {
    const body = order();
    const { body: p } = await authorize(body, 'a-11');
    await sim.setFaults({ captureDown: true, voidDown: true });
    expect((await capture(p.id, 1, 'c-11')).status).toBe(503);
    expect((await voidHold(p.id, 'v-11')).status).toBe(503);
    expect((await fetch(`${sim.url}/payments?reference=${body.reference}`)).status).toBe(200);
    await expect(sim.script(['decline'], 'captureScript')).rejects.toThrow(/400/);
    await expect(sim.script(['capture_then_hang'])).rejects.toThrow(/400/);
    const ledger = await sim.ledger();
    expect(ledger).toMatchObject({ captureRequests: 0, voidRequests: 0 });
  });

  it('captures exactly once for 12 concurrent captures with one key', async () => {
    const body = order();
    const { body: p } = await authorize(body, 'a-12');
    await sim.setFaults({ latencyMs: 30 });
    const results = await Promise.all(Array.from({ length: 12 }, () => capture(p.id, 2500, 'c-12')));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([200]));
    expect((await sim.ledger()).captures).toHaveLength(1);
  });
});
