import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './topology/engines.js';

export interface RedisServer {
  url: string;
  port: number;
  /** SIGKILL, and wait for the process to be gone. */
  stop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/**
 * A redis-server of the spec's own, on a free port, in memory only: for the specs that wipe Redis
 * (FLUSHALL) or take it away, so the files running beside them keep their queues. Stopped by its
 * pid. A port taken between the pick and the bind (another worker's) is picked again.
 */
export async function startRedisServer(): Promise<RedisServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    const url = `redis://127.0.0.1:${port}`;
    const deadline = Date.now() + 10_000;
    let up = false;
    while (!up && !gone && Date.now() < deadline) {
      up = await answers(url);
      if (!up) await new Promise((r) => setTimeout(r, 20));
    }
    if (up && !gone) {
      return {
        url,
        port,
        stop: async () => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
          await exited;
        },
      };
    }
    proc.kill('SIGKILL');
    await exited;
    if (attempt >= 5) throw new Error(`redis-server did not start on a free port (last ${port})`);
  }
}
