import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { EngineProcess, engineDir, freePort, runEngineCommand, startEngine, stopEngine, tail, waitForPort } from './engines.js';

const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A private PostgreSQL server of the topology: a primary, or a streaming replica of one. */
export interface PostgresServer {
  port: number;
  dir: string;
  /** A database on it, as the postgres superuser (trust over 127.0.0.1). */
  url(database: string): string;
  /** A query on a connection of its own; on a standby, asked again when replay cancels it (a recovery conflict). */
  query<T extends pg.QueryResultRow>(database: string, text: string, params?: unknown[]): Promise<T[]>;
  /** SIGSTOP every process of the server (postmaster and backends): it accepts connections and answers nothing. */
  freeze(): void;
  thaw(): void;
  /** Fast shutdown (SIGINT), waited for. */
  stop(): Promise<void>;
  logTail(): string;
}

/** Settings for a throwaway server: quick, not durable, enough connections for several service processes. */
const SETTINGS = {
  listen_addresses: "'127.0.0.1'",
  max_connections: '200',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  shared_buffers: '64MB',
  wal_level: 'replica',
  max_wal_senders: '4',
  hot_standby: 'on',
  // A standby query that conflicts with replay waits this long, then is canceled (the service asks the primary then).
  max_standby_streaming_delay: '1s',
  log_min_messages: 'warning',
};

function conf(port: number, dir: string): string {
  const lines = Object.entries({ ...SETTINGS, port: String(port), unix_socket_directories: `'${dir}'` }).map(([k, v]) => `${k} = ${v}`);
  return `\n# topology test\n${lines.join('\n')}\n`;
}

function server(port: number, dir: string, proc: EngineProcess): PostgresServer {
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  /** The postmaster and its children (backends, WAL receiver…), from /proc. */
  const family = (): number[] => {
    const pids = [proc.pid];
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === proc.pid) pids.push(Number(d));
      } catch {
        // gone meanwhile
      }
    }
    return pids;
  };
  const signalAll = (signal: NodeJS.Signals) => {
    for (const pid of family()) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone meanwhile
      }
    }
  };
  return {
    port,
    dir,
    url,
    async query<T extends pg.QueryResultRow>(database: string, text: string, params?: unknown[]) {
      for (let attempt = 1; ; attempt++) {
        const c = new pg.Client({ connectionString: url(database), connectionTimeoutMillis: 5000 });
        await c.connect();
        try {
          return (await c.query<T>(text, params)).rows;
        } catch (err) {
          // Replay keeps canceling a standby's query while it has work to apply (under load, many times over).
          if ((err as { code?: string }).code !== '40001' || attempt >= 30) throw err;
          await new Promise((r) => setTimeout(r, 100));
        } finally {
          await c.end();
        }
      }
    },
    freeze: () => signalAll('SIGSTOP'),
    thaw: () => signalAll('SIGCONT'),
    stop: async () => {
      signalAll('SIGCONT');
      await stopEngine(proc, 'SIGINT');
    },
    logTail: () => tail(proc.logFile),
  };
}

async function run(dir: string, port: number, what: string): Promise<PostgresServer> {
  const proc = startEngine(`${BIN}/postgres`, ['-D', join(dir, 'data')], dir, join(dir, 'postgres.log'));
  await waitForPort(port, what, 30_000, proc);
  const s = server(port, dir, proc);
  // Listening is not yet accepting: wait for a query to answer (a standby answers once consistent).
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await s.query('postgres', 'SELECT 1');
      return s;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what} does not answer: ${String(err)}\n${s.logTail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** initdb, then a primary on a free port, with `databases` created. */
export async function startPrimary(root: string, databases: string[] = []): Promise<PostgresServer> {
  const dir = engineDir(join(root, 'primary'));
  const port = await freePort();
  await runEngineCommand(`${BIN}/initdb`, ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], dir);
  writeFileSync(join(dir, 'data', 'postgresql.conf'), conf(port, dir), { flag: 'a' });
  const primary = await run(dir, port, 'the primary');
  for (const db of databases) await primary.query('postgres', `CREATE DATABASE ${db}`);
  return primary;
}

/** A streaming replica of `primary` (pg_basebackup -R: standby.signal and primary_conninfo), on a free port. */
export async function startReplica(root: string, primary: PostgresServer): Promise<PostgresServer> {
  const dir = engineDir(join(root, 'replica'));
  const port = await freePort();
  const data = join(dir, 'data');
  await runEngineCommand(`${BIN}/pg_basebackup`, ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'], dir);
  writeFileSync(join(data, 'postgresql.conf'), conf(port, dir), { flag: 'a' });
  return run(dir, port, 'the replica');
}
