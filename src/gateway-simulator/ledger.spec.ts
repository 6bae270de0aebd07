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
    expect(ledger.snapshot()).toEqual({ payments: [], refunds: [], chargeRequests: 0, chargeAttempts: [] });
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
});
