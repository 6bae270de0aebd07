import fc from 'fast-check';
import { canMove, confirmHttpStatus, HOLDING, isTerminal, ORDER_STATUSES, OrderStatus, sourcesOf, TERMINAL } from './order-state.js';

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
