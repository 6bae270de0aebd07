/**
 * Group commit: requests that arrive while the database is busy are collected and sent as one
 * call. A batch leaves when `maxBatch` requests wait, or at the end of the current turn of the
 * event loop — unless requests have lately been arriving less than four windows apart: then it
 * waits up to `windowMs` for company (or until a running batch ends), and no longer than it takes
 * to gather as many as the largest of the last batches (see RECENT). At most `maxInFlight` batches
 * run at once. So under load batches grow, and a lone request waits for nothing.
 *
 * Requests that share a key (`keyOf`) never travel in one batch, nor in two batches running at
 * once: the later one waits for the next batch, where it sees what the first one did.
 *
 * A batch's call is one transaction: when it fails, none of its requests changed anything. One
 * request's trouble must not fail the others, so a failed batch of several (`isolate` says which
 * failures) is run again one request per call, all at once, still holding its keys and its slot:
 * each request then gets its own answer, and only the one that cannot succeed fails. A failure
 * that would only repeat (the database is unreachable) rejects the whole batch at once.
 *
 * A request that failed for a passing reason (`retry.when`: a row another transaction held longer
 * than the call waits for it) is sent again after each of `retry.delaysMs` (±50 % at random, so
 * the requests a lock turned away do not come back in step), in whichever batch is next, and
 * rejected only once they are used up. It holds no slot and no key while it waits.
 */
export interface BatcherOptions<Req, Res> {
  maxBatch: number;
  maxInFlight: number;
  /** How long a batch waits for company while requests come fast (0: never). */
  windowMs: number;
  keyOf?: (req: Req) => string;
  /** One call for the whole batch; returns one result per request, in order. */
  run: (batch: Req[]) => Promise<Res[]>;
  /** Told the size of every batch sent (metrics). */
  onBatch?: (size: number) => void;
  /** Whether a failed batch of several is run again one request per call (see above); never when absent. */
  isolate?: (err: unknown) => boolean;
  /** Which failures a request is sent again after, and the pauses before each try (see above). */
  retry?: { when: (err: unknown) => boolean; delaysMs: readonly number[] };
  /** Told each time a request is sent again (metrics). */
  onRetry?: () => void;
}

interface Waiting<Req, Res> {
  req: Req;
  resolve: (res: Res) => void;
  reject: (err: unknown) => void;
  /** How many times it was sent again (retry). */
  retries?: number;
}

/**
 * Busy: requests arrive on average less than this many windows apart. Waiting then costs a lone
 * request at most one window and lets the next few share its call; a window of 2 ms waits from
 * ~125 requests a second on.
 */
const BUSY_GAP_WINDOWS = 4;

/**
 * How many of the last batch sizes a wait remembers. Under a closed loop (a checkout's clients,
 * the benchmark's connections) requests travel in convoys: a batch's answers bring the next
 * requests back together, within a fraction of the window. Once a waiting batch holds as many as
 * the largest of these, its convoy is in: it leaves at the end of this turn instead of at the
 * window's end. Those arriving in the same turn still join, so the sizes can grow; the largest of
 * several, not the last, so a batch of stragglers does not cut the next wait short.
 */
const RECENT = 16;

export class Batcher<Req, Res> {
  private queue: Waiting<Req, Res>[] = [];
  private inFlight = 0;
  /** Requests waiting out a retry's pause. */
  private retrying = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private idleWaiters: (() => void)[] = [];
  /**
   * The keys of each running batch, one Set per batch, dropped whole when the batch ends: keys are
   * never deleted one by one from a long-lived Set, whose deleted entries V8 promoted to the old
   * generation (see LinkedList).
   */
  private readonly keysInFlight: Set<string>[] = [];
  private lastArrival = -Infinity;
  /** The sizes of the last RECENT batches (a ring), and its largest: a waiting batch's target. */
  private readonly recent = new Array<number>(RECENT).fill(0);
  private recentAt = 0;
  private target = 0;
  /** True while `timer` is a window's wait (a timeout), not the end of the turn. */
  private waiting = false;
  /** Moving average of the time between arrivals, ms (see arrived). */
  private gapMs: number;

  constructor(private readonly opts: BatcherOptions<Req, Res>) {
    this.gapMs = opts.windowMs * 10;
  }

  submit(req: Req): Promise<Res> {
    if (this.opts.windowMs > 0) this.arrived();
    return new Promise<Res>((resolve, reject) => {
      this.queue.push({ req, resolve, reject });
      if (this.queue.length >= this.opts.maxBatch) this.flush();
      else if (this.waiting && this.target > 1 && this.queue.length >= this.target) this.endOfTurn();
      else this.schedule();
    });
  }

  /** Requests waiting or in flight. */
  get pending(): number {
    return this.queue.length + this.inFlight + this.retrying;
  }

  /** Resolves once nothing is queued or running (shutdown). */
  async drained(): Promise<void> {
    if (this.idle()) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Keeps `gapMs`, a moving average of the time between arrivals. One gap counts for at most ten
   * windows, so after a quiet spell a burst is recognised within a few dozen requests.
   */
  private arrived(): void {
    const now = performance.now();
    const gap = Math.min(now - this.lastArrival, this.opts.windowMs * 10);
    this.lastArrival = now;
    this.gapMs += (gap - this.gapMs) / 8;
  }

  private readonly fire = () => {
    this.timer = undefined;
    this.waiting = false;
    this.flush();
  };

  private schedule(): void {
    if (this.timer) return;
    // Busy: a short wait fills the call, and a fuller call costs less per request (BENCHMARKS.md,
    // "Lessons"). Quiet, a wait would only add latency.
    this.waiting = this.gapMs < this.opts.windowMs * BUSY_GAP_WINDOWS;
    this.timer = this.waiting ? setTimeout(this.fire, this.opts.windowMs) : setImmediate(this.fire);
  }

  /** The wait is over (its convoy is in): the batch leaves at the end of this turn. */
  private endOfTurn(): void {
    clearTimeout(this.timer as NodeJS.Timeout);
    this.waiting = false;
    this.timer = setImmediate(this.fire);
  }

  private remember(size: number): void {
    const old = this.recent[this.recentAt];
    this.recent[this.recentAt] = size;
    this.recentAt = (this.recentAt + 1) % RECENT;
    if (size >= this.target) this.target = size;
    else if (old === this.target) this.target = Math.max(...this.recent);
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.opts.maxInFlight) {
      const { batch, keys } = this.take();
      if (batch.length === 0) return; // every waiting key is in flight: the batch's end flushes again
      this.inFlight += 1;
      if (keys) this.keysInFlight.push(keys);
      void this.send(batch, keys);
    }
  }

  private take(): { batch: Waiting<Req, Res>[]; keys?: Set<string> } {
    const { keyOf, maxBatch } = this.opts;
    if (!keyOf) return { batch: this.queue.splice(0, maxBatch) };
    const batch: Waiting<Req, Res>[] = [];
    const rest: Waiting<Req, Res>[] = [];
    const keys = new Set<string>();
    for (const w of this.queue) {
      const key = keyOf(w.req);
      if (batch.length < maxBatch && !keys.has(key) && !this.running(key)) {
        keys.add(key);
        batch.push(w);
      } else {
        rest.push(w);
      }
    }
    this.queue = rest;
    return { batch, keys };
  }

  /** Whether a running batch holds this key. */
  private running(key: string): boolean {
    for (const keys of this.keysInFlight) if (keys.has(key)) return true;
    return false;
  }

  /** Each request of a failed batch in a call of its own, all at once. */
  private async oneByOne(batch: Waiting<Req, Res>[]): Promise<void> {
    await Promise.all(
      batch.map((w) =>
        this.opts.run([w.req]).then(
          ([res]) => w.resolve(res),
          (err: unknown) => this.fail(w, err),
        ),
      ),
    );
  }

  private async send(batch: Waiting<Req, Res>[], keys: Set<string> | undefined): Promise<void> {
    try {
      this.opts.onBatch?.(batch.length);
      this.remember(batch.length);
      const results = await this.opts.run(batch.map((w) => w.req));
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (err) {
      if (batch.length > 1 && this.opts.isolate?.(err)) await this.oneByOne(batch);
      else for (const w of batch) this.fail(w, err);
    } finally {
      this.inFlight -= 1;
      if (keys) this.keysInFlight.splice(this.keysInFlight.indexOf(keys), 1);
      // What arrived meanwhile has waited a whole batch already: send it now.
      if (this.queue.length > 0) this.flush();
      else this.settled();
    }
  }

  /** A request's call failed: it is sent again after a pause when `retry` allows, else rejected. */
  private fail(w: Waiting<Req, Res>, err: unknown): void {
    const tries = w.retries ?? 0;
    const delay = this.opts.retry?.when(err) ? this.opts.retry.delaysMs[tries] : undefined;
    if (delay === undefined) return w.reject(err);
    w.retries = tries + 1;
    this.retrying += 1;
    this.opts.onRetry?.();
    setTimeout(() => {
      this.retrying -= 1;
      this.queue.push(w);
      this.flush();
    }, delay * (0.5 + Math.random()));
  }

  private idle(): boolean {
    return this.queue.length === 0 && this.inFlight === 0 && this.retrying === 0;
  }

  private settled(): void {
    if (this.idle()) for (const done of this.idleWaiters.splice(0)) done();
  }
}
