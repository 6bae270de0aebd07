import { money, relative } from './format.js';

describe('money: minor units in major units with the currency code', () => {
  it.each([
    [4250, 'USD', '42.50 USD'],
    [5, 'USD', '0.05 USD'],
    [0, 'EUR', '0.00 EUR'],
    [100_000_000_000, 'USD', '1000000000.00 USD'],
    [500, 'JPY', '500 JPY'],
    [1234, 'KWD', '1.234 KWD'],
    [-250, 'USD', '-2.50 USD'],
  ])('%d %s → %s', (minor, currency, text) => {
    expect(money(minor, currency)).toBe(text);
  });
});

describe('relative: how far a time is from now, in words', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  const at = (offsetS: number) => new Date(now + offsetS * 1000).toISOString();
  it.each([
    [0, 'just now'],
    [-4, 'just now'],
    [-30, '30 s ago'],
    [-180, '3 min ago'],
    [150, 'in 2 min'],
    [-3600, '1 h ago'],
    [7500, 'in 2 h 5 min'],
    [-90_000, '1 d 1 h ago'],
  ])('%d s → %s', (offsetS, text) => {
    expect(relative(at(offsetS), now)).toBe(text);
  });

  it('says nothing for no time or an unreadable one', () => {
    expect(relative(null, now)).toBe('');
    expect(relative('not a time', now)).toBe('');
  });
});
