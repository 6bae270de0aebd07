import fc from 'fast-check';
import { Batcher } from './batcher.js';

const tick = () => new Promise((r) => setImmediate(r));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A batcher of numbers that records every batch it sends (one call in flight, at most 50 a batch). */
function recording(windowMs: number): { b: Batcher<number, number>; batches: number[][] } {
  const batches: number[][] = [];
  const b = new Batcher<number, number>({ maxBatch: 50, maxInFlight: 1, windowMs, run: async (xs) => (batches.push(xs), xs) });
  return { b, batches };
}

describe('Batcher', () => {
  it('sends what arrives together as one batch, results in order', async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, number>({ maxBatch: 100, maxInFlight: 1, windowMs: 0, run: async (xs) => (batches.push(xs), xs.map((x) => x * 2)) });
    const out = await Promise.all([1, 2, 3, 4].map((x) => b.submit(x)));
    expect(out).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([[1, 2, 3, 4]]);
  });

  it('never exceeds maxBatch nor maxInFlight, and what waits during a batch leaves right after it', async () => {
    let inFlight = 0;
    let peak = 0;
    const sizes: number[] = [];
    const b = new Batcher<number, number>({
      maxBatch: 3,
      maxInFlight: 2,
      windowMs: 0,
      run: async (xs) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        sizes.push(xs.length);
        await pause(5);
        inFlight -= 1;
        return xs;
      },
    });
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => b.submit(i)));
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(peak).toBeLessThanOrEqual(2);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(3);
    expect(sizes.reduce((a, n) => a + n, 0)).toBe(20);
  });

  it('a failed batch that isolate accepts runs again one request per call: only the request that fails fails', async () => {
    const calls: number[][] = [];
    const b = new Batcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      windowMs: 0,
      isolate: (err) => (err as Error).message === 'one bad request',
      run: async (xs) => {
        calls.push(xs);
        if (xs.includes(13)) throw new Error('one bad request');
        return xs.map((x) => x * 10);
      },
    });
    const answers = await Promise.allSettled([1, 13, 2, 3].map((x) => b.submit(x)));
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message))).toEqual([10, 'one bad request', 20, 30]);
    expect(calls).toEqual([[1, 13, 2, 3], [1], [13], [2], [3]]);
  });

  it('a failure isolate refuses (the database is unreachable) rejects the whole batch at once', async () => {
    const calls: number[][] = [];
    const b = new Batcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      windowMs: 0,
      isolate: () => false,
      run: async (xs) => {
        calls.push(xs);
        throw new Error('unreachable');
      },
    });
    const answers = await Promise.allSettled([1, 2].map((x) => b.submit(x)));
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toEqual([[1, 2]]);
  });

  it('while a failed batch runs one by one it keeps its keys and its slot: a request with one of its keys waits for it', async () => {
    const order: string[] = [];
    let first = true;
    const b = new Batcher<{ key: string; v: number }, number>({
      maxBatch: 10,
      maxInFlight: 1,
      windowMs: 0,
      keyOf: (r) => r.key,
      isolate: () => true,
      run: async (xs) => {
        order.push(xs.map((x) => `${x.key}${x.v}`).join(','));
        if (first) {
          first = false;
          throw new Error('lock timeout');
        }
        await pause(5);
        return xs.map((x) => x.v);
      },
    });
    const a = b.submit({ key: 'a', v: 1 });
    const c = b.submit({ key: 'c', v: 2 });
    await tick();
    const again = b.submit({ key: 'a', v: 3 });
    await expect(Promise.all([a, c, again])).resolves.toEqual([1, 2, 3]);
    expect(order).toEqual(['a1,c2', 'a1', 'c2', 'a3']);
  });

  it('a failing batch rejects every request in it, and the next batch runs', async () => {
    let calls = 0;
    const b = new Batcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      windowMs: 0,
      run: async (xs) => {
        calls += 1;
        if (calls === 1) throw new Error('rolled back');
        return xs;
      },
    });
    const first = [b.submit(1), b.submit(2)];
    await expect(first[0]).rejects.toThrow('rolled back');
    await expect(first[1]).rejects.toThrow('rolled back');
    await expect(b.submit(3)).resolves.toBe(3);
  });

  describe('retry', () => {
    class Busy extends Error {}
    const retry = { when: (err: unknown) => err instanceof Busy, delaysMs: [5, 10, 20] };

    it('a request that failed for a passing reason is sent again after a pause, in the next batch; the others are answered meanwhile', async () => {
      const calls: number[][] = [];
      let busyLeft = 2;
      const retried: number[] = [];
      const b = new Batcher<number, number>({
        maxBatch: 10,
        maxInFlight: 1,
        windowMs: 0,
        isolate: () => true,
        retry,
        onRetry: () => retried.push(1),
        run: async (xs) => {
          calls.push(xs);
          if (xs.includes(7) && busyLeft-- > 0) throw new Busy('lock held');
          return xs.map((x) => x * 10);
        },
      });
      const answers = await Promise.all([1, 7, 2].map((x) => b.submit(x)));
      expect(answers).toEqual([10, 70, 20]);
      // The batch, then one by one (7 busy again), then 7 alone after its pause.
      expect(calls).toEqual([[1, 7, 2], [1], [7], [2], [7]]);
      expect(retried).toHaveLength(1);
    });

    it('gives up once the pauses are used up, and never retries another failure', async () => {
      let calls = 0;
      const b = new Batcher<number, number>({
        maxBatch: 10,
        maxInFlight: 1,
        windowMs: 0,
        retry,
        run: async (xs) => {
          calls += 1;
          throw xs[0] === 1 ? new Busy('lock held') : new Error('unreachable');
        },
      });
      await expect(b.submit(1)).rejects.toThrow('lock held');
      expect(calls).toBe(1 + retry.delaysMs.length);
      calls = 0;
      await expect(b.submit(2)).rejects.toThrow('unreachable');
      expect(calls).toBe(1);
    });

    it('holds no slot while it waits, and drained waits for it', async () => {
      let first = true;
      const b = new Batcher<number, number>({
        maxBatch: 10,
        maxInFlight: 1,
        windowMs: 0,
        retry: { when: retry.when, delaysMs: [200] },
        run: async (xs) => {
          if (xs.includes(1) && first) {
            first = false;
            throw new Busy('lock held');
          }
          return xs;
        },
      });
      let oneAnswered = false;
      const one = b.submit(1).then((v) => ((oneAnswered = true), v));
      await pause(20);
      // 1 is waiting out its pause: 2 goes at once, and is answered first.
      await expect(b.submit(2)).resolves.toBe(2);
      expect(oneAnswered).toBe(false);
      expect(b.pending).toBe(1);
      let drained = false;
      const done = b.drained().then(() => (drained = true));
      await pause(10);
      expect(drained).toBe(false);
      await expect(one).resolves.toBe(1);
      await done;
      expect(b.pending).toBe(0);
    });
  });

  it('requests with one key never share a batch nor run in two batches at once (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 4 }), async (keys, maxBatch, maxInFlight) => {
        const running = new Set<number>();
        let violated = false;
        const b = new Batcher<{ key: number; i: number }, number>({
          maxBatch,
          maxInFlight,
          windowMs: 0,
          keyOf: (r) => String(r.key),
          run: async (batch) => {
            const ks = batch.map((r) => r.key);
            if (new Set(ks).size !== ks.length || ks.some((k) => running.has(k))) violated = true;
            ks.forEach((k) => running.add(k));
            await tick();
            ks.forEach((k) => running.delete(k));
            return batch.map((r) => r.i);
          },
        });
        const out = await Promise.all(keys.map((key, i) => b.submit({ key, i })));
        expect(out).toEqual(keys.map((_, i) => i));
        expect(violated).toBe(false);
        await b.drained();
        expect(b.pending).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('sends a lone request at the end of the turn, window or not, while requests are few', async () => {
    // A window of 10 min: had a request waited for company, the test would time out.
    const { b, batches } = recording(600_000);
    await b.submit(1);
    await pause(5);
    await b.submit(2);
    expect(batches).toEqual([[1], [2]]);
  }, 5_000);

  it('waits up to windowMs for company once requests come fast, and stops waiting after a quiet spell', async () => {
    const { b, batches } = recording(20);
    // A burst: thirty arrivals in one turn make the batcher busy (they travel as one batch).
    await Promise.all(Array.from({ length: 30 }, (_, i) => b.submit(i)));
    expect(batches).toEqual([Array.from({ length: 30 }, (_, i) => i)]);
    // Busy: a request 5 ms behind the first shares its call.
    const p = b.submit(100);
    await pause(5);
    await Promise.all([p, b.submit(101)]);
    expect(batches.at(-1)).toEqual([100, 101]);
    // Quiet again: a few requests far apart (each gap counts for at most ten windows) ...
    for (let i = 0; i < 5; i++) {
      await pause(210);
      await b.submit(200 + i);
    }
    // ... and a request goes alone again.
    const q = b.submit(300);
    await pause(5);
    await Promise.all([q, b.submit(301)]);
    expect(batches.slice(-2)).toEqual([[300], [301]]);
  });

  it('a waiting batch leaves once it holds as many as the largest recent batch (its convoy is in), else at the window', async () => {
    const { b, batches } = recording(300);
    // Ten in one turn: they leave together at its end, and the batcher is busy from then on.
    await Promise.all(Array.from({ length: 10 }, (_, i) => b.submit(i)));
    expect(batches).toEqual([Array.from({ length: 10 }, (_, i) => i)]);

    // The next convoy comes in over a few turns: it waits for company, but not for the window.
    let started = performance.now();
    const convoy = Array.from({ length: 5 }, (_, i) => b.submit(10 + i));
    await pause(2);
    convoy.push(...Array.from({ length: 5 }, (_, i) => b.submit(15 + i)));
    await Promise.all(convoy);
    expect(batches.at(-1)).toEqual(Array.from({ length: 10 }, (_, i) => 10 + i));
    expect(performance.now() - started).toBeLessThan(150);

    // Fewer than that: the whole window.
    started = performance.now();
    await Promise.all([b.submit(30), b.submit(31), b.submit(32)]);
    expect(batches.at(-1)).toEqual([30, 31, 32]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });
});
