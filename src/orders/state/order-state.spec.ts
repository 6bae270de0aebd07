import fc from 'fast-check';
import {
  canMove,
  canMovePayment,
  confirmHttpStatus,
  HOLDING,
  isTerminal,
  ORDER_STATUSES,
  OrderStatus,
  PAYMENT_CAPTURABLE,
  PAYMENT_MAY_HOLD,
  PAYMENT_STATUSES,
  PAYMENT_UNSETTLED,
  paymentSourcesOf,
  sourcesOf,
  TERMINAL,
} from './order-state.js';
import { paymentTo } from './moves.js';

describe('order state machine', () => {
  it('never leaves a terminal state', () => {
    for (const from of TERMINAL) for (const to of ORDER_STATUSES) expect(canMove(from, to)).toBe(false);
  });

  it('reaches every terminal state from both holding states', () => {
    for (const from of HOLDING) for (const to of TERMINAL) expect(canMove(from, to)).toBe(true);
  });

  it('never goes back to TRY_SUCCESS', () => {
    expect(sourcesOf('TRY_SUCCESS')).toEqual([]);
  });

  it('sourcesOf agrees with canMove', () => {
    for (const to of ORDER_STATUSES) {
      expect(sourcesOf(to).sort()).toEqual(ORDER_STATUSES.filter((f) => canMove(f, to)).sort());
    }
  });

  it('any walk ends at most one terminal state and stays there', () => {
    const status = fc.constantFrom(...ORDER_STATUSES);
    fc.assert(
      fc.property(fc.array(status, { maxLength: 30 }), (targets) => {
        let current: OrderStatus = 'TRY_SUCCESS';
        let terminals = 0;
        for (const to of targets) {
          if (!canMove(current, to)) continue;
          current = to;
          if (isTerminal(current)) terminals += 1;
        }
        return terminals <= 1;
      }),
    );
  });

  it('maps Confirm answers as the contract says', () => {
    expect(confirmHttpStatus('CONFIRM_SUCCESS')).toBe(200);
    expect(confirmHttpStatus('CONFIRM_PENDING')).toBe(202);
    expect(confirmHttpStatus('PAY_FAILED')).toBe(402);
    expect(confirmHttpStatus('CANCELED')).toBe('ORDER_CANCELED');
  });
});

describe('the payment held at Try', () => {
  it('never leaves captured or expired; nothing goes back to authorizing', () => {
    for (const to of PAYMENT_STATUSES) {
      expect(canMovePayment('captured', to)).toBe(false);
      expect(canMovePayment('expired', to)).toBe(false);
    }
    expect(paymentSourcesOf('authorizing')).toEqual([]);
  });

  it('every hold that may be held is voided on release, and a void ends in voided, expired or captured', () => {
    for (const from of PAYMENT_MAY_HOLD) expect(canMovePayment(from, 'voiding')).toBe(true);
    expect(PAYMENT_STATUSES.filter((to) => canMovePayment('voiding', to)).sort()).toEqual(['captured', 'expired', 'voided']);
  });

  it('a capture starts only from a held payment, never from an unsettled one', () => {
    expect(paymentSourcesOf('capturing')).toEqual(['authorized']);
    for (const s of PAYMENT_UNSETTLED) expect(PAYMENT_CAPTURABLE).not.toContain(s);
  });

  it('paymentTo maps exactly the allowed sources', () => {
    expect(paymentTo('voiding', PAYMENT_MAY_HOLD)).toEqual({ authorized: 'voiding', capturing: 'voiding' });
    expect(paymentTo('declined', ['authorizing', 'authorized'])).toEqual({ authorizing: 'declined' });
    for (const to of PAYMENT_STATUSES) for (const [from, target] of Object.entries(paymentTo(to))) expect([from, canMovePayment(from as never, target)]).toEqual([from, true]);
  });

  it('any walk of the payment ends held nowhere once it is captured, voided for good or expired', () => {
    const status = fc.constantFrom(...PAYMENT_STATUSES);
    fc.assert(
      fc.property(fc.array(status, { maxLength: 40 }), (targets) => {
        let current: (typeof PAYMENT_STATUSES)[number] = 'authorizing';
        let captures = 0;
        for (const to of targets) {
          if (!canMovePayment(current, to)) continue;
          current = to;
          if (current === 'captured') captures += 1;
        }
        return captures <= 1;
      }),
    );
  });
});
