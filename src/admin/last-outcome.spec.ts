import { lastOutcomeOf } from './last-outcome.js';

const at = '2026-01-02T03:04:05.000Z';

describe('lastOutcomeOf: why a pending order waits, in words', () => {
  it.each([
    ['payment.charge', { outcome: 'unknown', reason: 'timeout', detail: 'no answer from the gateway within 300 ms' }, 'gateway timed out', 'charge', null],
    ['payment.charge', { outcome: 'unknown', reason: 'error', detail: 'gateway answered 503' }, 'gateway error 503', 'charge', 503],
    ['payment.charge', { outcome: 'unknown', reason: 'error', detail: 'gateway unreachable: connect ECONNREFUSED' }, 'gateway unreachable', 'charge', null],
    ['payment.charge', { outcome: 'unknown', reason: 'error', detail: 'unexpected answer 200' }, 'gateway error', 'charge', null],
    ['payment.breaker_rejected', { outcome: 'unknown', reason: 'circuit_open', detail: 'payment gateway circuit breaker is open' }, 'breaker open', 'charge', null],
    ['payment.breaker_rejected', { outcome: 'failed', reason: 'circuit_open' }, 'lookup failed: breaker open', 'lookup', null],
    ['payment.lookup', { outcome: 'failed', reason: 'error', detail: 'gateway answered 500' }, 'lookup failed: gateway error 500', 'lookup', 500],
  ])('%s %j → %s', (type, data, text, step, httpStatus) => {
    expect(lastOutcomeOf(type, at, data)).toEqual({ text, step, httpStatus, reason: expect.any(String), at });
  });

  it('is null without an event', () => {
    expect(lastOutcomeOf(null, null, null)).toBeNull();
  });
});
