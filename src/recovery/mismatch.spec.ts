import type { GatewayPayment } from '../payments/gateway.types.js';
import { capturedMinor, findMismatch, SentOrder } from './mismatch.js';

const order = (o: Partial<SentOrder>): SentOrder => ({
  id: 'o-1',
  status: 'CONFIRM_SUCCESS',
  force_confirmed: false,
  refund_status: null,
  created_at: '',
  refund_watching: false,
  amount_minor: '500',
  payment_status: null,
  payment_id: null,
  ...o,
});
let n = 0;
const paid = (amountMinor: number, refundedMinor = 0): GatewayPayment => ({ id: `p-${++n}`, status: 'succeeded', amountMinor, currency: 'USD', reference: 'o-1', refundedMinor });
const declined = (): GatewayPayment => ({ ...paid(500), status: 'declined' });
const hold = (status: GatewayPayment['status'] = 'authorized', capturedMinor = 0, refundedMinor = 0): GatewayPayment => ({
  ...paid(500, refundedMinor),
  status,
  capturedMinor,
  authorizationExpiresAt: '2030-01-01T00:00:00.000Z',
});

describe('findMismatch: what reconciliation makes of an order and the gateway’s record of it', () => {
  it.each([
    ['a confirmed order with one capture', order({}), [paid(500)], undefined],
    ['a confirmed order with one capture beside declines', order({}), [declined(), paid(500), declined()], undefined],
    ['a confirmed order with no capture', order({}), [], 'no_capture'],
    ['a confirmed order whose only capture was refunded in full', order({}), [paid(500, 500)], 'no_capture'],
    ['a confirmed order with two captures', order({}), [paid(500), paid(500)], 'multiple_captures'],
    ['a confirmed order with two captures, one refunded in full', order({}), [paid(500), paid(500, 500)], undefined],
    ['a force-confirmed order with no capture', order({ force_confirmed: true }), [declined()], undefined],
    ['a force-confirmed order with a capture', order({ force_confirmed: true }), [paid(500)], 'capture_on_force_confirmed'],
    ['a canceled order with nothing captured', order({ status: 'CANCELED' }), [paid(500, 500), declined()], undefined],
    ['a canceled order with money captured, its refund watch still running', order({ status: 'CANCELED', refund_watching: true }), [paid(500)], undefined],
    ['a canceled order with money captured after its refund watch', order({ status: 'CANCELED' }), [paid(500, 200)], 'charged_after_release'],
    ['a failed payment with money captured after its refund watch', order({ status: 'PAY_FAILED' }), [paid(500)], 'charged_after_release'],
    ['held at Try: a confirmed order with its authorization captured', order({ payment_status: 'captured' }), [hold('succeeded', 500)], undefined],
    ['held at Try: a confirmed order whose authorization was never captured', order({ payment_status: 'authorized' }), [hold()], 'uncaptured_authorization'],
    ['held at Try: a confirmed order captured once and holding another authorization', order({ payment_status: 'captured' }), [hold('succeeded', 500), hold()], 'extra_authorization'],
    ['held at Try: a canceled order with its authorization voided', order({ status: 'CANCELED', payment_status: 'voided' }), [hold('voided')], undefined],
    ['held at Try: a canceled order whose authorization expired', order({ status: 'CANCELED', payment_status: 'voiding' }), [hold('expired')], undefined],
    ['held at Try: a canceled order still holding money, its watch running', order({ status: 'CANCELED', refund_watching: true }), [hold()], undefined],
    ['held at Try: a canceled order still holding money after its watch', order({ status: 'CANCELED' }), [hold()], 'authorized_after_release'],
    ['held at Try: a failed order with its authorization captured after its watch', order({ status: 'PAY_FAILED' }), [hold('succeeded', 300)], 'charged_after_release'],
    ['held at Try: a canceled order whose capture was refunded in full', order({ status: 'CANCELED' }), [hold('succeeded', 300, 300)], undefined],
  ])('%s', (_what, o, payments, kind) => {
    expect(findMismatch(o, payments)?.kind).toBe(kind);
  });

  it('says what it found: the order, and what the gateway holds', () => {
    expect(findMismatch(order({ status: 'CANCELED' }), [paid(500, 200), paid(100)])).toEqual({ orderId: 'o-1', kind: 'charged_after_release', detail: 'CANCELED, but 400 is still captured' });
    expect(findMismatch(order({}), [paid(1), paid(2), paid(3)])).toEqual({ orderId: 'o-1', kind: 'multiple_captures', detail: 'confirmed, but the gateway has 3 captures' });
    expect(findMismatch(order({ force_confirmed: true }), [paid(1), paid(2)])).toEqual({
      orderId: 'o-1',
      kind: 'capture_on_force_confirmed',
      detail: 'force-confirmed by an operator, and the gateway holds 2 capture(s)',
    });
  });

  it('capturedMinor sums what each capture still holds; a decline holds nothing', () => {
    expect(capturedMinor([paid(500, 100), declined(), paid(50)])).toBe(450);
    expect(capturedMinor([])).toBe(0);
  });
});
