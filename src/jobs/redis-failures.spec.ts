import { FAILING_FOR_MS, FAILURE_LOG_EVERY_MS, FailureTracker } from './redis-failures.js';

/** A tracker on a clock of the test's own, logging into an array. */
function tracker() {
  let now = 1_000_000;
  const lines: { queue: string; failures: number; err: string }[] = [];
  const t = new FailureTracker((f) => lines.push(f), () => now);
  return { t, lines, advance: (ms: number) => (now += ms) };
}

describe('FailureTracker', () => {
  it('logs a failing worker once at once, then at most one line per queue and 10 s, each with the count since the last', () => {
    const { t, lines, advance } = tracker();
    const crossslot = new Error("CROSSSLOT Keys in request don't hash to the same slot");
    for (let i = 0; i < 70_000; i++) {
      t.failed('refunds', crossslot);
      advance(25_000 / 70_000); // 70,000 failures in 25 s, as a cluster without hash tags gave
    }
    expect(lines[0]).toEqual({ queue: 'refunds', failures: 1, err: crossslot.message });
    expect(lines.length).toBe(1 + Math.floor(25_000 / FAILURE_LOG_EVERY_MS));
    // What the last failures left is written by a timer (or at shutdown), never lost.
    t.flushAll();
    expect(lines.length).toBe(2 + Math.floor(25_000 / FAILURE_LOG_EVERY_MS));
    expect(lines.reduce((n, l) => n + l.failures, 0)).toBe(70_000);
  });

  it('writes what is still counted when the 10 s are up, even if no failure comes after', async () => {
    const lines: { failures: number }[] = [];
    const t = new FailureTracker((f) => lines.push(f), Date.now, 50);
    t.failed('webhooks', new Error('READONLY'));
    t.failed('webhooks', new Error('READONLY'));
    t.failed('webhooks', new Error('READONLY'));
    expect(lines.map((l) => l.failures)).toEqual([1]);
    await new Promise((r) => setTimeout(r, 120));
    expect(lines.map((l) => l.failures)).toEqual([1, 2]);
  });

  it('counts each queue apart', () => {
    const { t, lines } = tracker();
    t.failed('refunds', new Error('READONLY You can\'t write against a read only replica.'));
    t.failed('webhooks', new Error('MOVED 1234 10.0.0.5:6379'));
    t.failed('refunds', new Error('READONLY again'));
    expect(lines.map((l) => [l.queue, l.failures])).toEqual([
      ['refunds', 1],
      ['webhooks', 1],
    ]);
    t.flushAll();
    expect(lines.at(-1)).toEqual({ queue: 'refunds', failures: 1, err: 'READONLY again' });
  });

  it('is failing, with the reason, until a success or FAILING_FOR_MS without a failure', () => {
    const { t, advance } = tracker();
    expect(t.failing()).toBeUndefined();
    t.failed('confirm-retry', new Error('CLUSTERDOWN The cluster is down\nand a second line'));
    expect(t.failing()).toEqual({ queue: 'confirm-retry', reason: 'CLUSTERDOWN The cluster is down' });
    advance(1);
    t.succeeded('confirm-retry');
    expect(t.failing()).toBeUndefined();
    advance(1);
    t.failed('confirm-retry', new Error('CLUSTERDOWN'));
    advance(FAILING_FOR_MS - 1);
    expect(t.failing()?.queue).toBe('confirm-retry');
    advance(1);
    expect(t.failing()).toBeUndefined();
  });
});
