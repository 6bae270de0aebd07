/**
 * PgBouncer for the `pooled` workload, started by the bench itself from Debian's package (as the
 * topology spec does: test/support/topology/pgbouncer.ts), in front of the bench's Postgres on a
 * free port: `pool_mode = transaction` and nothing else changed but `ignore_startup_parameters =
 * extra_float_digits` (1.18's defaults otherwise: max_client_conn 100, default_pool_size 20).
 * PgBouncer refuses to run as root, so as root it runs as the `postgres` user (setpriv execs it in
 * place: the process spawned is PgBouncer, stopped by its pid).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PGBOUNCER = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface BenchPooler {
  /** `target` with its host and port replaced by the pooler's. */
  url(target: string): string;
  pid: number;
  stop(): Promise<void>;
}

export function pgbouncerVersion(): string | undefined {
  try {
    return execFileSync(PGBOUNCER, ['--version'], { encoding: 'utf8' }).split('\n')[0];
  } catch {
    return undefined;
  }
}

export async function startPgBouncer(target: string, port: number): Promise<BenchPooler> {
  const t = new URL(target);
  const user = decodeURIComponent(t.username || 'postgres');
  const dir = mkdtempSync(join(tmpdir(), 'tcc-bench-pgbouncer-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = (file: string) => Number(readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('postgres:'))!.split(':')[2]);
    chownSync(dir, ids('/etc/passwd'), ids('/etc/group'));
    chmodSync(dir, 0o700);
  }
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=${t.hostname} port=${t.port || '5432'}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir = ${dir}
auth_type = trust
auth_file = ${join(dir, 'userlist.txt')}
pool_mode = transaction
ignore_startup_parameters = extra_float_digits
`,
  );
  // The server login's password, when the bench's Postgres needs one, comes from here.
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" "${decodeURIComponent(t.password)}"\n`);
  const log = openSync(join(dir, 'pgbouncer.log'), 'a');
  const [cmd, args] = asRoot ? ['setpriv', ['--reuid', 'postgres', '--regid', 'postgres', '--init-groups', '--', PGBOUNCER]] : [PGBOUNCER, []];
  const proc: ChildProcess = spawn(cmd, [...args, join(dir, 'pgbouncer.ini')], { stdio: ['ignore', log, log] });
  closeSync(log);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const deadline = Date.now() + 15_000;
  while (!(await listening(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`pgbouncer did not start: ${readFileSync(join(dir, 'pgbouncer.log'), 'utf8')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: proc.pid!,
    url: (u: string) => {
      const pooled = new URL(u);
      pooled.hostname = '127.0.0.1';
      pooled.port = String(port);
      return pooled.toString();
    },
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM'); // 1.18: immediate shutdown
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
