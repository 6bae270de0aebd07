import { Ledger, type IdGenerator } from './ledger.js';

function sequentialIds(): IdGenerator {
  let n = 0;
  return (prefix) => `${prefix}_${++n}`;
}

const order = { amountMinor: 1000, currency: 'EUR', reference: 'ord-1' };

describe('Ledger', () => {
  let ledger: Ledger;
  beforeEach(() => {
    ledger = new Ledger(sequentialIds());
  });

  it('records a charge and replays it for the same key and fingerprint', () => {
    expect(ledger.lookupCharge('k1', 'f1')).toEqual({ kind: 'new' });
    const payment = ledger.charge('k1', 'f1', order, 'succeeded');
    expect(payment).toEqual({ id: 'pay_1', status: 'succeeded', ...order, refundedMinor: 0 });
    expect(ledger.lookupCharge('k1', 'f1')).toEqual({ kind: 'replay', value: payment });
    expect(ledger.snapshot().payments).toHaveLength(1);
  });

  it('reports a conflict when a key is reused with a different fingerprint', () => {
    ledger.charge('k1', 'f1', order, 'succeeded');
    expect(ledger.lookupCharge('k1', 'f2')).toEqual({ kind: 'conflict' });
  });

  it('refuses to bind one key twice', () => {
    ledger.charge('k1', 'f1', order, 'succeeded');
    expect(() => ledger.charge('k1', 'f1', order, 'succeeded')).toThrow(/already used/);
  });

  it('records declined payments and lists them by reference', () => {
    ledger.charge('k1', 'f1', order, 'declined');
    ledger.charge('k2', 'f2', order, 'succeeded');
    ledger.charge('k3', 'f3', { ...order, reference: 'other' }, 'succeeded');
    expect(ledger.paymentsByReference('ord-1').map((p) => p.status)).toEqual(['declined', 'succeeded']);
  });

  it('refunds partially and fully, then rejects over-refunds', () => {
    const { id } = ledger.charge('k1', 'f1', order, 'succeeded');
    expect(ledger.refund('r1', 'x1', id, 400)).toEqual({
      ok: true,
      refund: { id: 're_2', paymentId: id, status: 'succeeded', amountMinor: 400 },
    });
    expect(ledger.refund('r2', 'x2', id, 601)).toEqual({ ok: false, reason: 'exceeds_captured' });
    expect(ledger.refund('r2', 'x2', id, 600).ok).toBe(true);
    expect(ledger.getPayment(id)?.refundedMinor).toBe(1000);
    expect(ledger.refund('r3', 'x3', id, 1)).toEqual({ ok: false, reason: 'exceeds_captured' });
  });

  it('replays refunds by key and does not bind failed refunds', () => {
    const { id } = ledger.charge('k1', 'f1', order, 'succeeded');
    expect(ledger.refund('r1', 'x1', id, 2000).ok).toBe(false);
    expect(ledger.lookupRefund('r1', 'x1')).toEqual({ kind: 'new' });
    const result = ledger.refund('r1', 'x1', id, 100);
    expect(result.ok).toBe(true);
    expect(ledger.lookupRefund('r1', 'x1')).toEqual({ kind: 'replay', value: result.ok && result.refund });
    expect(ledger.lookupRefund('r1', 'other')).toEqual({ kind: 'conflict' });
  });

  it('rejects refunds of unknown and declined payments', () => {
    const declined = ledger.charge('k1', 'f1', order, 'declined');
    expect(ledger.refund('r1', 'x', 'pay_nope', 1)).toEqual({ ok: false, reason: 'payment_not_found' });
    expect(ledger.refund('r1', 'x', declined.id, 1)).toEqual({ ok: false, reason: 'payment_declined' });
  });

  it('keeps charge and refund keys in separate spaces', () => {
    const { id } = ledger.charge('same', 'f1', order, 'succeeded');
    expect(ledger.lookupRefund('same', 'x')).toEqual({ kind: 'new' });
    expect(ledger.refund('same', 'x', id, 1).ok).toBe(true);
  });

  it('hands out copies so callers cannot edit the books', () => {
    const payment = ledger.charge('k1', 'f1', order, 'succeeded');
    payment.refundedMinor = 999;
    ledger.snapshot().payments[0]!.amountMinor = 1;
    expect(ledger.getPayment(payment.id)).toMatchObject({ amountMinor: 1000, refundedMinor: 0 });
  });

  it('counts charge requests and resets everything', () => {
    ledger.countChargeRequest();
    ledger.countChargeRequest();
    ledger.charge('k1', 'f1', order, 'succeeded');
    expect(ledger.snapshot().chargeRequests).toBe(2);
    ledger.reset();
    expect(ledger.snapshot()).toEqual({
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
    expect(ledger.lookupCharge('k1', 'f1')).toEqual({ kind: 'new' });
  });

  it('logs the reference and the token of every charge request, replays included', () => {
    ledger.countChargeRequest({ reference: 'ord-1', paymentToken: 'tok_a' });
    ledger.countChargeRequest({ reference: 'ord-1' });
    expect(ledger.snapshot().chargeAttempts).toEqual([
      { reference: 'ord-1', paymentToken: 'tok_a' },
      { reference: 'ord-1', paymentToken: null },
    ]);
    ledger.snapshot().chargeAttempts[0]!.paymentToken = 'edited';
    expect(ledger.snapshot().chargeAttempts[0]!.paymentToken).toBe('tok_a');
  });

  it('generates unique prefixed ids by default', () => {
    const real = new Ledger();
    const a = real.charge('a', 'f', order, 'succeeded');
    const b = real.charge('b', 'f', order, 'succeeded');
    expect(a.id).toMatch(/^pay_[0-9a-f]{32}$/);
    expect(a.id).not.toBe(b.id);
  });

  describe('authorizations', () => {
    let clock: number;
    const DAY = 24 * 3600_000;
    beforeEach(() => {
      clock = Date.UTC(2030, 0, 1);
      ledger = new Ledger(sequentialIds(), () => clock);
    });

    it('holds an amount until its expiry, replaying the first answer for its key', () => {
      const held = ledger.authorize('a1', 'f1', order, 'authorized', DAY);
      expect(held).toEqual({ id: 'pay_1', status: 'authorized', ...order, refundedMinor: 0, capturedMinor: 0, authorizationExpiresAt: '2030-01-02T00:00:00.000Z' });
      ledger.capture('c1', 'x', held.id, 400);
      expect(ledger.lookupCharge('a1', 'f1')).toEqual({ kind: 'replay', value: held });
      expect(ledger.getPayment(held.id)).toMatchObject({ status: 'succeeded', capturedMinor: 400 });
    });

    it('captures at most what was authorized, once; the capture replays by its key', () => {
      const { id } = ledger.authorize('a1', 'f1', order, 'authorized', DAY);
      expect(ledger.capture('c1', 'x', id, 1001)).toMatchObject({ status: 422 });
      const first = ledger.capture('c1', 'x', id, 1000);
      expect(first).toEqual({ status: 200, body: expect.objectContaining({ status: 'succeeded', capturedMinor: 1000 }) });
      expect(ledger.lookupStep('capture', 'c1', 'x')).toEqual({ kind: 'replay', value: first });
      expect(ledger.lookupStep('capture', 'c1', 'y')).toEqual({ kind: 'conflict' });
      expect(ledger.capture('c2', 'x', id, 1000)).toMatchObject({ status: 409, body: { status: 'succeeded' } });
      expect(ledger.void('v1', 'x', id)).toMatchObject({ status: 409, body: { status: 'succeeded' } });
      expect(ledger.snapshot().captures).toEqual([{ paymentId: id, amountMinor: 1000 }]);
      expect(ledger.refund('r1', 'x', id, 1000).ok).toBe(true);
    });

    it('voids an open hold (again 200), after which it cannot be captured', () => {
      const { id } = ledger.authorize('a1', 'f1', order, 'authorized', DAY);
      expect(ledger.void('v1', 'x', id)).toMatchObject({ status: 200, body: { status: 'voided' } });
      expect(ledger.void('v2', 'x', id)).toMatchObject({ status: 200, body: { status: 'voided' } });
      expect(ledger.capture('c1', 'x', id, 10)).toMatchObject({ status: 409, body: { status: 'voided', capturedMinor: 0 } });
      expect(ledger.snapshot().voids).toEqual([{ paymentId: id }]);
      expect(ledger.refund('r1', 'x', id, 1)).toEqual({ ok: false, reason: 'payment_declined' });
    });

    it('expires by the clock: no capture (409 expired), a void answers 409 expired', () => {
      const { id } = ledger.authorize('a1', 'f1', order, 'authorized', DAY);
      clock += DAY;
      expect(ledger.paymentsByReference('ord-1')[0]!.status).toBe('expired');
      expect(ledger.capture('c1', 'x', id, 10)).toMatchObject({ status: 409, body: { status: 'expired' } });
      expect(ledger.void('v1', 'x', id)).toMatchObject({ status: 409, body: { status: 'expired' } });
      expect(ledger.snapshot()).toMatchObject({ captures: [], voids: [] });
    });

    it('expireNow ends a hold at once; unknown payments are 404, unbound', () => {
      const { id } = ledger.authorize('a1', 'f1', order, 'authorized', DAY);
      ledger.expireNow(id);
      expect(ledger.getPayment(id)!.status).toBe('expired');
      expect(ledger.capture('c1', 'x', 'pay_nope', 1)).toMatchObject({ status: 404 });
      expect(ledger.lookupStep('capture', 'c1', 'x')).toEqual({ kind: 'new' });
    });
  });
});
