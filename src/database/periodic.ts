import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SessionLocks } from './session-lock.js';

interface Task {
  running?: Promise<unknown>;
  /** Failures not logged yet, and when the last line was written (see LOG_EVERY_MS). */
  unlogged: number;
  loggedAt: number;
}

/** A failing job writes at most one line per this many ms, with the count of failures since the last. */
const LOG_EVERY_MS = 10_000;

/**
 * Work that runs every N ms, one run at a time per process and one process at a time across the
 * deployment (a session advisory lock on DATABASE_DIRECT_URL, see session-lock.ts): the sweeper,
 * reconciliation, retention, the webhook poller and the console's session purge all register here
 * the same way, as an interval in @nestjs/schedule's registry. Shutdown stops the timers and waits for the runs
 * in progress; `stopped()` tells a long run to wind down.
 */
@Injectable()
export class PeriodicJobs implements BeforeApplicationShutdown {
  private readonly logger = new Logger(PeriodicJobs.name);
  private readonly tasks = new Map<string, Task>();
  private stopping = false;

  constructor(
    private readonly registry: SchedulerRegistry,
    private readonly locks: SessionLocks,
  ) {}

  readonly stopped = (): boolean => this.stopping;

  register(name: string, everyMs: number, lockKey: number, work: () => Promise<unknown>): void {
    const task: Task = { unlogged: 0, loggedAt: -Infinity };
    this.tasks.set(name, task);
    const timer = setInterval(() => {
      if (task.running || this.stopping) return;
      task.running = this.locks.withLock(lockKey, work)
        .catch((err: unknown) => this.failed(name, task, err))
        .finally(() => (task.running = undefined));
    }, everyMs);
    this.registry.addInterval(name, timer);
  }

  /**
   * A failed run, logged at most once per LOG_EVERY_MS per job with the count since the last line:
   * the webhook poller runs every 500 ms, and a database it cannot reach wrote two lines a second.
   */
  private failed(job: string, task: Task, err: unknown): void {
    task.unlogged += 1;
    const now = Date.now();
    if (now - task.loggedAt < LOG_EVERY_MS) return;
    this.logger.warn({ job, failures: task.unlogged, err: (err as Error).message }, 'periodic job failed; it runs again at its next interval');
    task.unlogged = 0;
    task.loggedAt = now;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    for (const name of this.tasks.keys()) {
      if (this.registry.doesExist('interval', name)) this.registry.deleteInterval(name);
    }
    await Promise.all([...this.tasks.values()].map((t) => t.running));
  }
}
