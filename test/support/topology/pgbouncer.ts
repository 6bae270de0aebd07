import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EngineProcess, engineDir, freePort, startEngine, stopEngine, tail, waitForPort } from './engines.js';

/** PgBouncer in front of one Postgres server. */
export interface Pooler {
  port: number;
  url(database: string): string;
  /** Immediate shutdown (SIGTERM: every client connection dropped), then the same pooler again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  logTail(): string;
}

/**
 * The settings the contract promises to work with: transaction pooling, and nothing else changed
 * but `ignore_startup_parameters = extra_float_digits` (PgBouncer 1.18's defaults for the rest:
 * max_client_conn 100, default_pool_size 20). What remains is where it listens and how it lets
 * clients in (trust, as the private Postgres behind it does).
 */
function ini(dir: string, port: number, target: { port: number }): string {
  return `[databases]
* = host=127.0.0.1 port=${target.port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir = ${dir}
auth_type = trust
auth_file = ${join(dir, 'userlist.txt')}
pidfile = ${join(dir, 'pgbouncer.pid')}
pool_mode = transaction
ignore_startup_parameters = extra_float_digits
`;
}

export async function startPgBouncer(root: string, target: { port: number }, binary = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer'): Promise<Pooler> {
  const dir = engineDir(join(root, 'pgbouncer'));
  const port = await freePort();
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(config, ini(dir, port, target));
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  const logFile = join(dir, 'pgbouncer.log');
  let proc: EngineProcess;
  const start = async () => {
    proc = startEngine(binary, [config], dir, logFile);
    await waitForPort(port, 'pgbouncer', 15_000, proc);
  };
  await start();
  return {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    restart: async () => {
      await stopEngine(proc, 'SIGTERM');
      await start();
    },
    stop: () => stopEngine(proc, 'SIGTERM'),
    logTail: () => tail(logFile),
  };
}
