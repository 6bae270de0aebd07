/**
 * Polls /health/ready of several processes while a topology spec runs, keeping each change of
 * what they say about Redis: when it changed, to what, and the reason given.
 */
export interface HealthChange {
  name: string;
  /** ms since the watch started. */
  at: number;
  /** The HTTP status, or 0 when the process did not answer. */
  status: number;
  redis: string;
  reason?: string;
}

export interface HealthWatch {
  /** Every change seen so far, in order. */
  changes: HealthChange[];
  /** What each process said last. */
  last(name: string): HealthChange | undefined;
  /** ms since the watch started. */
  now(): number;
  stop(): Promise<HealthChange[]>;
}

export function watchHealth(targets: { name: string; url: string }[], everyMs = 200): HealthWatch {
  const started = Date.now();
  const changes: HealthChange[] = [];
  const latest = new Map<string, HealthChange>();
  let stopped = false;
  const poll = async (name: string, url: string) => {
    while (!stopped) {
      let change: HealthChange;
      try {
        const res = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(3000) });
        const body = (await res.json()) as { checks?: { redis?: { status: string; reason?: string } } };
        change = { name, at: Date.now() - started, status: res.status, redis: body.checks?.redis?.status ?? '?', reason: body.checks?.redis?.reason };
      } catch {
        change = { name, at: Date.now() - started, status: 0, redis: 'no answer' };
      }
      const before = latest.get(name);
      if (!before || before.status !== change.status || before.redis !== change.redis || before.reason !== change.reason) changes.push(change);
      latest.set(name, change);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  };
  const loops = targets.map((t) => poll(t.name, t.url));
  return {
    changes,
    last: (name) => latest.get(name),
    now: () => Date.now() - started,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return changes;
    },
  };
}

/** Lines of a process's log that carry `msg`. */
export function linesWith(logs: string[], msg: string): string[] {
  return logs.flatMap((chunk) => chunk.split('\n')).filter((l) => l.includes(`"msg":"${msg}"`));
}
