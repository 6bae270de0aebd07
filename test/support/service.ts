import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ADMIN_TOKEN, REDIS_URL } from './env.js';

export interface ServiceProcess {
  url: string;
  proc: ChildProcess;
  logs: string[];
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL: no shutdown hooks, in-flight work lost mid-step. */
  kill(): Promise<void>;
}

/**
 * The suite's settings for every service it starts. The gateway timeout is 2 s: on two cores with
 * the suite's files side by side an ordinary charge can take longer than a few hundred
 * milliseconds, and a Confirm that should answer 200 answered 202 (CONFIRM_PENDING). A file that
 * scripts a hanging gateway adds HANG_ENV, so each hang costs a short timeout.
 *
 * TCC_V8_FLAGS=off: the suite's processes keep V8's own heap settings. The service's (src/runtime-
 * flags.ts) are for throughput under load, and cost a start a second boot and, without
 * allocation-site pretenuring, more scavenges of what the start keeps: about 0.9 against 0.6
 * CPU-s a start, and the suite starts some two hundred. observability.e2e-spec.ts runs the
 * service as shipped and checks those flags.
 */
export const FAST_ENV = {
  ADMIN_TOKEN,
  PAYMENT_TIMEOUT_MS: '2000',
  RESERVATION_TTL_MS: '60000',
  CONFIRM_RETRY_BASE_MS: '100',
  CONFIRM_MAX_ATTEMPTS: '3',
  // Once a second (5 s shipped): an idle process's sweep is six round trips to Postgres, and at
  // 300 ms an idle service took 2.9-3.6 % of a core against 1.7-1.8 % at 5 s; the sweeper only
  // takes what is a second overdue anyway. Files that time the sweeper set their own.
  SWEEP_INTERVAL_MS: '1000',
  IDEMPOTENCY_WAIT_MS: '1000',
  BREAKER_RESET_TIMEOUT_MS: '1000',
  REFUND_ALERT_AFTER_MS: '2000',
  SCHEDULE_BUCKET_MS: '100',
  LOG_LEVEL: 'info',
  TCC_V8_FLAGS: 'off',
  // scrypt at 2^12 (4 MiB, ~12 ms) for the passwords the specs set: 2^17 is ~0.7 CPU-s a hash or
  // sign-in here, and the services of `operators` and `console-access` took 21 and 14 CPU-s with
  // it, 1.8 and 2.5 at 2^12. A hash keeps its cost; `passwords.spec.ts` checks the default.
  PASSWORD_HASH_COST: '12',
};

/**
 * For files that script a gateway that hangs (hang, *_then_hang): a hang times out in 1 s, and
 * every hang a file means to time out lasts 3 s or more. Not shorter: the calls meant to answer
 * share the timeout, and on a machine as busy as the suite makes it one of them now and then takes
 * longer than 300 ms — a timeout where a file expects an answer (a lookup at the TTL ends a paid
 * order CANCELED).
 */
export const HANG_ENV = { PAYMENT_TIMEOUT_MS: '1000' } as const;

/**
 * V8's compiled code of the service's modules, kept between its processes (Node's module compile
 * cache): a start-up spends most of its CPU compiling what every start compiles alike, and the
 * suite starts some two hundred of them. It changes nothing the processes do.
 */
const COMPILE_CACHE = join(tmpdir(), 'tcc-test-compile-cache');

export function queuePrefix(): string {
  return `tcc-test-${randomBytes(4).toString('hex')}`;
}

/**
 * Starts the built service (`node dist/main.js`) as a real process on a free port, the way an
 * operator does. Resolves once it logs that it listens (api, all) or started (worker), within `readyMs`
 * (generous: with the suite's files in parallel on two cores a start takes several times its
 * quiet-machine 4 s); one not ready by then is killed, not left running.
 */
export async function startService(env: Record<string, string>, readyMs = 60_000): Promise<ServiceProcess> {
  const proc = spawn(process.execPath, ['dist/main.js'], {
    env: { PATH: process.env.PATH, NODE_COMPILE_CACHE: COMPILE_CACHE, REDIS_URL, PORT: '0', ...FAST_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let timer: NodeJS.Timeout | undefined;
  const ready = new Promise<string>((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        logs.push(line);
        const port = /"port":(\d+)/.exec(line);
        if (port && line.includes('listening on port')) resolve(`http://127.0.0.1:${port[1]}`);
        if (line.includes('worker started')) resolve('');
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (c: Buffer) => logs.push(c.toString()));
    void exited.then((code) => reject(new Error(`service exited with ${code} before it was ready:\n${logs.join('\n')}`)));
    timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`service not ready in ${readyMs / 1000} s:\n${logs.join('\n')}`));
    }, readyMs);
  });
  const url = await ready.finally(() => clearTimeout(timer));
  return {
    url,
    proc,
    logs,
    stop: async () => {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (proc.exitCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

export async function deleteQueueKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
