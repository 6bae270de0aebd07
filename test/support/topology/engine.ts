import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * What the topology helpers share: free ports, a temporary directory, engine processes started
 * by the test itself (never daemonized, so each is stopped by its own pid) and one-off commands.
 */

/** `n` ports free right now on 127.0.0.1, all held open together so none is handed out twice. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

export function tempDir(label: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `tcc-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Engine processes still running when the test process ends are killed with it. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

export interface Engine {
  pid: number;
  port: number;
  /** Exited, by itself or by a signal. */
  gone(): boolean;
  /** SIGKILL: a machine lost, no goodbye to its clients or peers. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

/** Starts `redis-server` with `args` (a config file first, for a Sentinel) in the foreground. */
export function startEngine(port: number, args: string[]): Engine {
  const proc = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  void exited.then(() => running.delete(proc));
  const gone = () => proc.exitCode !== null || proc.signalCode !== null;
  const signal = async (sig: NodeJS.Signals, graceMs: number) => {
    if (gone()) return;
    proc.kill(sig);
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return { pid: proc.pid!, port, gone, kill: () => signal('SIGKILL', 0), stop: () => signal('SIGTERM', 5000) };
}

/** One command on a fresh connection that gives up at once when the engine is away. */
export async function command(port: number, ...args: (string | number)[]): Promise<unknown> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000, commandTimeout: 2000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(String(args[0]), ...args.slice(1).map(String));
  } finally {
    redis.disconnect();
  }
}

/** `INFO`'s `key:value` lines of one section. */
export async function info(port: number, section: string): Promise<Record<string, string>> {
  const text = String(await command(port, 'INFO', section));
  return Object.fromEntries(text.split('\r\n').filter((l) => l.includes(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (not undefined) or the time is up; the error names `what`. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(100);
  }
}
