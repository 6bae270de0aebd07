import { Injectable, Logger } from '@nestjs/common';

/** A failing worker logs its first failure at once, then at most one line per this long, with a count. */
export const FAILURE_LOG_EVERY_MS = 10_000;
/** A worker whose last failure is older than this (or was followed by a success) is not failing. */
export const FAILING_FOR_MS = 5000;

interface QueueState {
  lastFailure: number;
  lastSuccess: number;
  reason: string;
  /** Failures not yet in a log line. */
  unlogged: number;
  lastLogged: number;
  flush?: NodeJS.Timeout;
}

type Log = (fields: { queue: string; failures: number; err: string }) => void;

/**
 * What the workers' Redis commands are going through, per queue: health reads it (Redis is
 * `degraded`, with the reason, while a worker's commands fail), and the log hears of it at most
 * once per queue and FAILURE_LOG_EVERY_MS, with the count of failures since the last line. A
 * worker whose every command fails retries at once: one line per failure once filled a disk.
 */
export class FailureTracker {
  private readonly queues = new Map<string, QueueState>();

  constructor(
    private readonly log: Log,
    private readonly now: () => number = Date.now,
    private readonly everyMs = FAILURE_LOG_EVERY_MS,
  ) {}

  failed(queue: string, err: Error): void {
    const at = this.now();
    const s = this.state(queue);
    s.lastFailure = at;
    s.reason = describe(err);
    s.unlogged += 1;
    if (at - s.lastLogged >= this.everyMs) this.write(queue, s, at);
    else s.flush ??= setTimeout(() => this.write(queue, s, this.now()), s.lastLogged + this.everyMs - at).unref();
  }

  /** A worker's command went through (it finished a job, or its connection is ready again). */
  succeeded(queue: string): void {
    this.state(queue).lastSuccess = this.now();
  }

  /** The queue whose worker fails now, with the reason; undefined when none does. */
  failing(): { queue: string; reason: string } | undefined {
    const at = this.now();
    for (const [queue, s] of this.queues) {
      if (s.lastFailure > s.lastSuccess && at - s.lastFailure < FAILING_FOR_MS) return { queue, reason: s.reason };
    }
    return undefined;
  }

  /** Shutdown: what is still counted goes out now. */
  flushAll(): void {
    for (const [queue, s] of this.queues) if (s.unlogged) this.write(queue, s, this.now());
  }

  private write(queue: string, s: QueueState, at: number): void {
    clearTimeout(s.flush);
    s.flush = undefined;
    if (!s.unlogged) return;
    this.log({ queue, failures: s.unlogged, err: s.reason });
    s.unlogged = 0;
    s.lastLogged = at;
  }

  private state(queue: string): QueueState {
    let s = this.queues.get(queue);
    if (!s) this.queues.set(queue, (s = { lastFailure: 0, lastSuccess: 0, reason: '', unlogged: 0, lastLogged: -Infinity }));
    return s;
  }
}

/** The process's tracker (JobWorkers reports to it, HealthService reads it), logging as the workers. */
@Injectable()
export class RedisFailures extends FailureTracker {
  constructor() {
    const logger = new Logger('JobWorkers');
    super((fields) => logger.warn(fields, 'worker error'));
  }
}

/** The error's first line, bounded: Redis's own words (CROSSSLOT, READONLY, MOVED…), never a key or a value. */
export function describe(err: Error): string {
  return String(err?.message ?? err).split('\n')[0].slice(0, 200);
}
