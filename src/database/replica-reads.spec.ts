import { lsnValue, staleness } from './replica-reads.js';

describe('lsnValue', () => {
  it('reads a WAL position as one number, the high word first', () => {
    expect(lsnValue('0/3000028')).toBe(0x3000028n);
    expect(lsnValue('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(lsnValue('1/0') > lsnValue('0/FFFFFFFF')).toBe(true);
  });
});

describe('staleness', () => {
  const at = 10_000;

  it('an idle primary is no lag: the replica has replayed the one position sampled again and again', () => {
    const samples = [0, 250, 500, 750, 1000].map((t) => ({ at: at - 1000 + t, lsn: 0x3000000n }));
    expect(staleness(samples, 0x3000000n, at + 3)).toEqual({ lagMs: 3 });
  });

  it('a replica behind a busy primary is as stale as the latest sample it has replayed past', () => {
    const samples = [
      { at: 9000, lsn: 100n },
      { at: 9250, lsn: 200n },
      { at: 9500, lsn: 300n },
      { at: 9750, lsn: 400n },
    ];
    expect(staleness(samples, 250n, at)).toEqual({ lagMs: 750 });
    expect(staleness(samples, 400n, at)).toEqual({ lagMs: 250 });
    expect(staleness(samples, 999n, at)).toEqual({ lagMs: 250 });
  });

  it('behind every sample, or with none, the lag is not known and is no reason to read the replica', () => {
    expect(staleness([{ at: 8000, lsn: 500n }], 499n, at)).toEqual({ reason: 'replay lag at least 2000 ms' });
    expect(staleness([], 499n, at)).toEqual({ reason: "the primary's WAL position is not known yet" });
  });
});
