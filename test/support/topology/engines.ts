import { ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { AddressInfo, createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What the topology's engines (Debian's PostgreSQL, PgBouncer; Redis by the same rules) have in
 * common: each runs from its package's binaries as a process of the test's own, on free ports
 * (never a machine service's 5432 or 6379), with its files under one temporary directory, and is
 * stopped by its pid. PostgreSQL and PgBouncer refuse to run as root, so when the tests do (CI,
 * containers) they run as the `postgres` user, on directories it owns.
 */
const MACHINE_PORTS = new Set([5432, 6379]);
const ENGINE_USER = 'postgres';

/** A free TCP port on 127.0.0.1, never one of the machine's own services. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer().once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const { port: p } = srv.address() as AddressInfo;
        srv.close(() => resolve(p));
      });
    });
    if (!MACHINE_PORTS.has(port)) return port;
  }
}

/** The directory every engine of one topology keeps its files in; removed by `removeRoot`. */
export function makeRoot(name: string): string {
  const root = mkdtempSync(join(tmpdir(), `tcc-${name}-`));
  chmodSync(root, 0o755); // the engine user must reach its own directories inside
  return root;
}

export function removeRoot(root: string): void {
  rmSync(root, { recursive: true, force: true });
}

const asRoot = process.getuid?.() === 0;

/** A directory an engine may write: owned by the engine user when the tests run as root. */
export function engineDir(path: string): string {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  if (asRoot) chownSync(path, uidOf(ENGINE_USER), gidOf(ENGINE_USER));
  return path;
}

function idOf(flag: '-u' | '-g', user: string): number {
  const line = readFileSync(flag === '-u' ? '/etc/passwd' : '/etc/group', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  if (!line) throw new Error(`no ${flag === '-u' ? 'user' : 'group'} ${user}: install Debian's postgresql package`);
  return Number(line.split(':')[2]);
}
const uidOf = (user: string) => idOf('-u', user);
const gidOf = (user: string) => idOf('-g', user);

/**
 * The command line that runs `file` as the engine user when the tests run as root. setpriv execs
 * the engine in place (no PAM session, no watching parent as with runuser), so the process
 * spawned is the engine and its pid is the one to signal.
 */
export function engineCommand(file: string, args: string[]): [string, string[]] {
  return asRoot ? ['setpriv', ['--reuid', ENGINE_USER, '--regid', ENGINE_USER, '--init-groups', '--', file, ...args]] : [file, args];
}

/** Runs a one-shot engine command (initdb, pg_basebackup) to its end; its output on failure. */
export function runEngineCommand(file: string, args: string[], cwd: string): Promise<string> {
  const [cmd, argv] = engineCommand(file, args);
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { cwd, env: { PATH: process.env.PATH, HOME: cwd, LANG: 'C.UTF-8' }, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/** A long-running engine process, its output appended to `logFile`. */
export interface EngineProcess {
  proc: ChildProcess;
  pid: number;
  logFile: string;
  /** The process has exited. */
  exited: Promise<void>;
}

/** Engines still running: killed if the test process exits without stopping them (a crash, a timeout). */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

export function startEngine(file: string, args: string[], cwd: string, logFile: string): EngineProcess {
  const [cmd, argv] = engineCommand(file, args);
  const out = openSync(logFile, 'a');
  const proc = spawn(cmd, argv, { cwd, env: { PATH: process.env.PATH, HOME: cwd, LANG: 'C.UTF-8' }, stdio: ['ignore', out, out] });
  closeSync(out);
  running.add(proc);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  void exited.then(() => running.delete(proc));
  return { proc, pid: proc.pid!, logFile, exited };
}

/** Signals an engine and waits for it to exit (SIGKILL after `graceMs`); a stopped (SIGSTOP) one is continued first. */
export async function stopEngine(e: EngineProcess, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  if (e.proc.exitCode !== null || e.proc.signalCode !== null) return;
  e.proc.kill('SIGCONT');
  e.proc.kill(signal);
  const killer = setTimeout(() => e.proc.kill('SIGKILL'), graceMs);
  await e.exited;
  clearTimeout(killer);
}

/** Resolves once something accepts TCP connections on the port. */
export async function waitForPort(port: number, what: string, timeoutMs = 30_000, e?: EngineProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (e && e.proc.exitCode !== null) throw new Error(`${what} exited (${e.proc.exitCode}): ${tail(e.logFile)}`);
    if (Date.now() > deadline) throw new Error(`${what} is not listening on ${port} after ${timeoutMs} ms: ${e ? tail(e.logFile) : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The end of a log file, for a failure's message. */
export function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
