import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { checkNodeVersion } from '../src/common/node-version.js';
import { createTestDatabase, TestDatabase } from './support/database.js';
import { ADMIN_TOKEN, databaseUrl, PG_ADMIN_URL, REDIS_URL } from './support/env.js';
import { client, waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { deleteQueueKeys, queuePrefix, startService } from './support/service.js';

/** Start-up: a bad environment stops the process naming the variable; roles start what they should. */
let db: TestDatabase;
const prefix = queuePrefix();

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
  await deleteQueueKeys(prefix);
});

it.each([
  ['PORT', 'not-a-port'],
  ['ROLE', 'scheduler'],
  ['DATABASE_URL', 'mysql://localhost/tcc'],
  ['CONFIRM_MAX_ATTEMPTS', '0'],
  ['BREAKER_ERROR_THRESHOLD_PERCENT', '150'],
  ['TRUST_PROXY', '10.0.0.0/8,proxy.internal'],
  ['REDIS_CLUSTER_NODES', '10.0.0.1'],
  ['REDIS_SENTINELS', '10.0.0.1:26379'],
])('%s=%s stops start-up with a message naming the variable', (name, value) => {
  const run = spawnSync(process.execPath, ['dist/main.js'], {
    env: { PATH: process.env.PATH, DATABASE_URL: db.url, REDIS_URL, [name]: value },
    encoding: 'utf8',
    timeout: 15_000,
  });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain(name);
  expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
});

describe('holds capped by RESERVATION_MAX_TTL_MS', () => {
  it('RESERVATION_MAX_TTL_MS=120000 alone starts, and both holds default to the cap', async () => {
    // Empty counts as unset: the test environment's own RESERVATION_TTL_MS must not hide its default.
    const svc = await startService({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, ROLE: 'api', RESERVATION_MAX_TTL_MS: '120000', RESERVATION_TTL_MS: '' });
    try {
      const api = client(svc.url);
      const sku = uniqueSku('CAP');
      expect((await api.putSku(sku, 5)).status).toBe(200);
      const order = await api.order(randomUUID(), { customerId: 'c-cap', items: [{ sku, quantity: 1 }] });
      expect(order.status).toBe(201);
      expect(Date.parse(order.body.reservationExpiresAt) - Date.parse(order.body.createdAt)).toBe(120_000);
      const transactionId = `cap-${randomUUID()}`;
      const branch = await api.send('POST', '/tcc/inventory/try', { body: { transactionId, items: [{ sku, quantity: 1 }] }, admin: true });
      expect(branch.status).toBe(200);
      const list = await api.get('/admin/participant/transactions?status=RESERVED', true);
      const row = list.body.data.find((b: { transactionId: string }) => b.transactionId === transactionId);
      expect(Date.parse(row.expiresAt) - Date.parse(row.createdAt)).toBe(120_000);
    } finally {
      await svc.stop();
    }
  });

  it.each(['PARTICIPANT_TTL_MS', 'RESERVATION_TTL_MS'])('%s set above a RESERVATION_MAX_TTL_MS stops start-up naming it', (name) => {
    const run = spawnSync(process.execPath, ['dist/main.js'], {
      env: { PATH: process.env.PATH, DATABASE_URL: db.url, REDIS_URL, ADMIN_TOKEN, RESERVATION_MAX_TTL_MS: '120000', [name]: '120001' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${name}: must not exceed RESERVATION_MAX_TTL_MS`);
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});

it('ROLE=worker runs jobs and the sweeper without an HTTP port; ROLE=api serves HTTP', async () => {
  const worker = await startService({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, ROLE: 'worker' });
  try {
    expect(worker.url).toBe('');
    expect(worker.logs.join('\n')).toMatch(/job workers started/);
  } finally {
    await worker.stop();
  }
  const api = await startService({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, ROLE: 'api' });
  try {
    expect((await fetch(`${api.url}/health`)).status).toBe(200);
    expect(api.logs.join('\n')).not.toMatch(/job workers started/);
  } finally {
    await api.stop();
  }
});

it('migrations already applied are not run again; several processes can start at once', async () => {
  // Each one that started is stopped, even when another did not: a process left running keeps the run from ending.
  const starts = await Promise.allSettled([1, 2, 3].map(() => startService({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, ROLE: 'api' })));
  const started = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    for (const s of starts) if (s.status === 'rejected') throw s.reason;
    const files = readdirSync('dist/migrations').filter((f) => f.endsWith('.js'));
    const [row] = await db.query<{ n: number; names: number }>(`SELECT count(*)::int AS n, count(DISTINCT name)::int AS names FROM typeorm_migrations`);
    expect(row).toEqual({ n: files.length, names: files.length });
  } finally {
    await Promise.all(started.map((s) => s.stop()));
  }
});

/** The migration runner as a start-up runs it, on `url`: its exit status and output. */
function migrate(url: string, env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/database/migrate-cli.js'], { env: { PATH: process.env.PATH, DATABASE_URL: url, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // 'close', not 'exit': the output can still be in the pipe when the process has exited.
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

it('three processes migrating a new database at once: each migration runs once, and all of them start', async () => {
  // A migration that builds an index CONCURRENTLY waits for the snapshots older than it, so a
  // process waiting for the migrations' lock must not hold one meanwhile (it once did: deadlock).
  const fresh = `tcc_fresh_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${fresh}`);
    const runs = await Promise.all([1, 2, 3].map(() => migrate(databaseUrl(fresh))));
    expect(runs.map((r) => ({ status: r.status, stderr: r.stderr }))).toEqual([1, 2, 3].map(() => ({ status: 0, stderr: '' })));
    const ran = runs.flatMap((r) => (JSON.parse(r.stdout) as { migrations: string[] }).migrations);
    const files = readdirSync('dist/migrations').filter((f) => f.endsWith('.js'));
    expect({ ran: ran.length, distinct: new Set(ran).size }).toEqual({ ran: files.length, distinct: files.length });
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${fresh} WITH (FORCE)`);
    await admin.end();
  }
}, 60_000);

it('a process waiting longer than any statement timeout for another to finish migrating still starts', async () => {
  // Another process holds the migrations' lock, as one migrating a large database does, for longer
  // than the statement timeout the migrations run with (MIGRATION_STATEMENT_TIMEOUT_MS: the 30 s the
  // service's sessions had, 2 s here): the waiting one queues, then starts.
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [0x7cc5_0000]);
    const run = migrate(db.url, { MIGRATION_STATEMENT_TIMEOUT_MS: '2000' });
    // Held for twice the timeout once the runner has asked for the lock (it asks every 100-250 ms).
    await waitFor('the runner to ask for the lock', async () => (await holder.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_try_advisory_lock%' AND pid <> pg_backend_pid()`)).rowCount! > 0, 20_000, 20);
    await new Promise((r) => setTimeout(r, 4000));
    await holder.query('SELECT pg_advisory_unlock($1)', [0x7cc5_0000]);
    expect(await run).toEqual({ status: 0, stdout: `${JSON.stringify({ migrations: [], sqlFunctions: [] })}\n`, stderr: '' });
  } finally {
    await holder.end();
  }
}, 60_000);

describe('on a Node older than 22.12', () => {
  /** The machine's own node when it is older than the service needs (Debian's is 20), else undefined. */
  function olderNode(): { path: string; version: string } | undefined {
    const path = process.env.OLD_NODE ?? '/usr/bin/node';
    if (!existsSync(path)) return undefined;
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '');
    return checkNodeVersion(version) === undefined ? undefined : { path, version };
  }

  const entries: [string, string[]][] = [
    ['the service', ['dist/main.js']],
    ['the migration runner', ['dist/database/migrate-cli.js']],
    ['the TypeORM CLI on its data source', ['node_modules/typeorm/cli.js', '-d', 'dist/database/data-source.js', 'migration:run']],
    ['the gateway simulator', ['dist/gateway-simulator/main.js']],
    ['the test setup', ['node_modules/jest/bin/jest.js', '--ci', '--selectProjects', 'e2e', 'test/startup.e2e-spec.ts']],
  ];

  it.each(entries)('%s names the version it needs and exits 1', (_what, args) => {
    const old = olderNode();
    if (!old) {
      // No older Node on this machine: the check itself is held by src/common/node-version.spec.ts.
      expect(checkNodeVersion(process.versions.node)).toBeUndefined();
      return;
    }
    const run = spawnSync(old.path, args, {
      env: { PATH: process.env.PATH, NODE_OPTIONS: '--experimental-vm-modules', DATABASE_URL: db.url, REDIS_URL, GATEWAY_PORT: '0' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 1, stderr: `tcc-inventory needs Node.js 22.12 or later (24 LTS recommended); this is v${old.version}\n` });
  });
});
