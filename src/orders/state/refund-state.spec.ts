import { lookupFor, refundWatchMs } from './refund-state.js';

describe('refundWatchMs', () => {
  it('is max(60 s, 10 × PAYMENT_TIMEOUT_MS) unless REFUND_WATCH_MS is set', () => {
    expect(refundWatchMs({ PAYMENT_TIMEOUT_MS: 3000 })).toBe(60_000);
    expect(refundWatchMs({ PAYMENT_TIMEOUT_MS: 9000 })).toBe(90_000);
    expect(refundWatchMs({ PAYMENT_TIMEOUT_MS: 9000, REFUND_WATCH_MS: 8000 })).toBe(8000);
  });
});

describe('lookupFor', () => {
  it('a hold that may still be open: void; a hold that ended, a capture or a charge: refund', () => {
    for (const s of ['voiding', 'authorizing', 'authorized', 'capturing'] as const) expect({ s, for: lookupFor(s) }).toEqual({ s, for: 'void' });
    for (const s of ['voided', 'expired', 'declined', 'captured', null] as const) expect({ s, for: lookupFor(s) }).toEqual({ s, for: 'refund' });
  });
});
