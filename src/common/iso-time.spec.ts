import { isIsoTime } from './iso-time.js';

describe('isIsoTime', () => {
  it('takes real moments, with or without seconds and fractions, Z or an offset', () => {
    for (const t of ['2030-01-01T00:00Z', '2030-02-28T23:59:59.123456789Z', '2032-02-29T12:00+15:59', '2030-12-31T23:59:59-08:00', '0001-01-01T00:00Z']) {
      expect({ t, ok: isIsoTime(t) }).toEqual({ t, ok: true });
    }
  });

  it('refuses what the pattern lets through but no calendar or Postgres has', () => {
    for (const t of ['2030-02-30T00:00Z', '2031-02-29T00:00Z', '2030-04-31T00:00Z', '2030-13-01T00:00Z', '2030-00-10T00:00Z', '2030-01-00T00:00Z', '0000-01-01T00:00Z', '2030-01-01T24:00Z', '2030-01-01T23:60Z', '2030-01-01T23:59:60Z', '2030-01-01T00:00+16:00', '2030-01-01T00:00+01:60']) {
      expect({ t, ok: isIsoTime(t) }).toEqual({ t, ok: false });
    }
  });

  it('refuses what the pattern refuses', () => {
    for (const t of ['tomorrow', '2030-01-01', '2030-01-01 00:00Z', '2030-01-01T00:00', '2030-1-01T00:00Z', ' 2030-01-01T00:00Z']) {
      expect({ t, ok: isIsoTime(t) }).toEqual({ t, ok: false });
    }
  });
});
