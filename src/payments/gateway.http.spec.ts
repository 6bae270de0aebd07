import { classify } from './gateway.http.js';
import { GatewayRejectedError, GatewayUnavailableError, netCaptured } from './gateway.types.js';

describe('classify', () => {
  it('passes the statuses that carry a final answer', () => {
    expect(classify({ status: 201, body: { a: 1 } }, [201, 402])).toEqual({ status: 201, body: { a: 1 } });
    expect(classify({ status: 402, body: null }, [201, 402]).status).toBe(402);
  });

  it.each([408, 409, 425, 429, 500, 502, 503, 504, 405, 418])('treats %d as an unknown outcome', (status) => {
    expect(() => classify({ status, body: null }, [201, 402])).toThrow(GatewayUnavailableError);
  });

  it.each([400, 401, 403, 404, 422])('treats %d as a final refusal of the request', (status) => {
    expect(() => classify({ status, body: { error: 'bad' } }, [201, 402])).toThrow(GatewayRejectedError);
  });
});

describe('netCaptured', () => {
  const base = { id: 'p', amountMinor: 1000, currency: 'USD', reference: 'r', refundedMinor: 0 } as const;
  it('is what is left after refunds of a succeeded payment', () => {
    expect(netCaptured({ ...base, status: 'succeeded', refundedMinor: 300 })).toBe(700);
  });
  it('is zero for a declined payment', () => {
    expect(netCaptured({ ...base, status: 'declined' })).toBe(0);
  });
});
