import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { Redis } from 'ioredis';
import { ADMIN_TOKEN, PG_ADMIN_URL, REDIS_URL } from './support/env.js';
import { useHarness } from './support/harness.js';
import { Answer, client, Client, waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';
import { PgProxy, startPgProxy } from './support/pg-proxy.js';
import { RATE_WINDOW_MS, roomInWindow } from './support/rate-window.js';
import { expectProblem } from './support/problem.js';
import { deleteQueueKeys, ServiceProcess, startService } from './support/service.js';

/**
 * Operations (hardening issue, points 9, 10, 17, 18, 19): Postgres refusing connections, what
 * reaches the logs, the queue dashboard without Redis, the rate limit and the hold limit, and the
 * admin token's edges. Extra processes run against this file's database with small pools.
 */
const h = useHarness({ RESERVATION_TTL_MS: '600000' });
const extra: ServiceProcess[] = [];
const redises: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(extra.splice(0).map((s) => s.kill()));
  for (const r of redises.splice(0)) r.kill('SIGKILL');
});

async function start(env: Record<string, string>): Promise<{ svc: ServiceProcess; api: Client }> {
  const svc = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, DB_POOL_SIZE: '3', ROLE: 'api', ...env });
  extra.push(svc);
  return { svc, api: client(svc.url) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function ownRedis(): Promise<{ url: string; kill: () => void }> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  redises.push(proc);
  const url = `redis://127.0.0.1:${port}`;
  await waitFor('redis-server', async () => {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined);
    try {
      await r.connect();
      return (await r.ping()) === 'PONG';
    } finally {
      r.disconnect();
    }
  });
  return { url, kill: () => proc.kill('SIGKILL') };
}

const orderCount = async () => Number((await h.db.query<{ n: string }>('SELECT count(*)::text AS n FROM orders'))[0].n);
const tryOrder = (api: Client, s: string, customerId = 'c-ops', key = randomUUID()) => api.order(key, { customerId, items: [{ sku: s, quantity: 1 }] });

describe('9. Postgres refusing connections answers 503 SERVICE_UNAVAILABLE', () => {
  /** Every checkout and admin route that needs Postgres, answering 503 while it refuses. */
  async function expectAll503(api: Client, s: string, orderId: string): Promise<void> {
    const answers: [string, Answer][] = [
      ['GET /inventory', await api.get(`/inventory/${s}`)],
      ['POST /orders', await tryOrder(api, s)],
      ['GET /orders/{id}', await api.get(`/orders/${orderId}`)],
      ['POST confirm', await api.post(`/orders/${orderId}/confirm`, {})],
      ['POST cancel', await api.post(`/orders/${orderId}/cancel`)],
      ['GET /admin/orders', await api.get('/admin/orders', true)],
      ['PUT /admin/inventory', await api.admin('PUT', `/admin/inventory/${s}`, { priceMinor: 1, currency: 'USD', onHand: 1 })],
      ['POST /tcc/inventory/try', await api.admin('POST', '/tcc/inventory/try', { transactionId: randomUUID(), items: [{ sku: s, quantity: 1 }] })],
      ['GET /health/ready', await api.get('/health/ready')],
    ];
    for (const [what, res] of answers) {
      expect([what, res.status, res.body?.code]).toEqual([what, 503, 'SERVICE_UNAVAILABLE']);
      expectProblem(res, 503, 'SERVICE_UNAVAILABLE');
    }
  }

  /** A login role of its own, with what the service needs in this file's database; `admin` is a superuser connection for the test to use. */
  async function withRole<T>(work: (role: string, url: string, admin: pg.Client) => Promise<T>): Promise<T> {
    const role = `tcc_hard_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    for (const grant of [
      `GRANT USAGE ON SCHEMA public TO ${role}`,
      `GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`,
      `GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`,
      `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ${role}`,
    ]) {
      await h.db.query(grant);
    }
    const url = new URL(h.db.url);
    url.username = role;
    try {
      return await work(role, url.toString(), admin);
    } finally {
      await Promise.all(extra.splice(0).map((s) => s.kill()));
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
      await h.db.query(`DROP OWNED BY ${role}`);
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    }
  }

  /** What Postgres answers a new connection as `url` right now. */
  async function connectError(url: string): Promise<string | undefined> {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      return undefined;
    } catch (err) {
      return (err as { code?: string }).code;
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  it('53300 "too many connections for role" (a role CONNECTION LIMIT): 503, nothing half-written, and it recovers by itself', async () => {
    const s = uniqueSku('PG53300');
    expect((await h.api.putSku(s, 50)).status).toBe(200);
    await withRole(async (role, url, admin) => {
      const { api } = await start({ DATABASE_URL: url });
      const held = await tryOrder(api, s);
      expect(held.status).toBe(201);
      await admin.query(`ALTER ROLE ${role} CONNECTION LIMIT 0`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
      expect(await connectError(url)).toBe('53300');
      const before = await orderCount();
      await expectAll503(api, s, held.body.id);
      expect(await orderCount()).toBe(before);
      expect((await h.api.get(`/inventory/${s}`)).body).toMatchObject({ onHand: 50, reserved: 1 });
      expect((await h.api.get(`/orders/${held.body.id}`)).body.status).toBe('TRY_SUCCESS');

      await admin.query(`ALTER ROLE ${role} CONNECTION LIMIT -1`);
      await waitFor('checkout to work again', async () => (await tryOrder(api, s)).status === 201, 15_000, 200);
    });
  });

  it('53300 "too many connections for database" (a database CONNECTION LIMIT reached): 503', async () => {
    const s = uniqueSku('PGDB');
    expect((await h.api.putSku(s, 50)).status).toBe(200);
    const name = new URL(h.db.url).pathname.slice(1);
    await withRole(async (role, url, admin) => {
      const { api } = await start({ DATABASE_URL: url });
      const held = await tryOrder(api, s);
      expect(held.status).toBe(201);
      try {
        // Superusers (this suite's own connections) are exempt; the service's role is not.
        await admin.query(`ALTER DATABASE ${name} CONNECTION LIMIT 0`);
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
        expect(await connectError(url)).toBe('53300');
        await expectAll503(api, s, held.body.id);
      } finally {
        await admin.query(`ALTER DATABASE ${name} CONNECTION LIMIT -1`);
      }
      await waitFor('checkout to work again', async () => (await tryOrder(api, s)).status === 201, 15_000, 200);
    });
  });

  describe('a server refusing new connections with any of these SQLSTATEs (a stand-in in front of Postgres)', () => {
    let proxy: PgProxy;
    let svc: ServiceProcess;
    let api: Client;
    let s: string;
    let held: Answer;
    beforeAll(async () => {
      s = uniqueSku('PROXY');
      expect((await h.api.putSku(s, 100)).status).toBe(200);
      proxy = await startPgProxy(h.db.url);
      svc = await startService({ DATABASE_URL: proxy.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, DB_POOL_SIZE: '3', ROLE: 'api' });
      api = client(svc.url);
      held = await tryOrder(api, s);
      expect(held.status).toBe(201);
    });
    afterAll(async () => {
      await svc?.kill();
      await proxy?.close();
    });

    it.each([
      ['57P03', 'the database system is starting up'],
      ['57P03', 'the database system is shutting down'],
      ['53300', 'sorry, too many clients already'],
      ['53400', 'configuration limit exceeded'],
      ['53200', 'out of memory'],
      ['53100', 'could not extend file: No space left on device'],
      ['57P01', 'terminating connection due to administrator command'],
    ])('%s (%s): 503, nothing written, and it recovers by itself', async (sqlState, message) => {
      proxy.refuse(sqlState, message);
      try {
        expect(await connectError(proxy.url)).toBe(sqlState);
        const before = await orderCount();
        await expectAll503(api, s, held.body.id);
        expect(await orderCount()).toBe(before);
      } finally {
        proxy.pass();
      }
      await waitFor('checkout to work again', async () => (await tryOrder(api, s)).status === 201, 15_000, 200);
    });

    // Postgres refuses new connections for other reasons too: an operator disallowing them during
    // maintenance (ALTER DATABASE … ALLOW_CONNECTIONS false), a database dropped or renamed, a
    // role or pg_hba.conf change. The contract's 503 covers "refuses new connections", whatever the code.
    it.each([
      ['55000', 'database "tcc" is not currently accepting connections'],
      ['3D000', 'database "tcc" does not exist'],
      ['28P01', 'password authentication failed for user "tcc"'],
    ])('%s at connect time (%s): 503 as well', async (sqlState, message) => {
      proxy.refuse(sqlState, message);
      try {
        expect(await connectError(proxy.url)).toBe(sqlState);
        await expectAll503(api, s, held.body.id);
      } finally {
        proxy.pass();
      }
      await waitFor('checkout to work again', async () => (await tryOrder(api, s)).status === 201, 15_000, 200);
    });
  });
});

describe('9. the periodic jobs\' own session (DATABASE_DIRECT_URL) refused while the pool works', () => {
  it('health says so — 200, `degraded`, `periodicJobs` with the reason — and clears once the jobs elect themselves again', async () => {
    const proxy = await startPgProxy(h.db.url);
    try {
      const { svc, api } = await start({ ROLE: 'all', DATABASE_DIRECT_URL: proxy.url });
      const failureLines = () =>
        svc.logs
          .flatMap((chunk) => chunk.split('\n'))
          .filter((l) => l.includes('periodic job failed'))
          .map((l) => JSON.parse(l) as { job: string; failures: number });
      const health = async () => (await api.get('/health')) as Answer;
      await waitFor('the jobs to elect themselves', async () => (await health()).body.checks?.periodicJobs?.status === 'up', 10_000, 100);
      expect((await health()).body.status).toBe('ok');
      // "too many clients" on the direct session only: the session in use is cut, and no new one is let in.
      proxy.refuse('53300', 'sorry, too many clients already');
      await waitFor('health to tell', async () => (await health()).body.checks?.periodicJobs?.status === 'degraded', 15_000, 100);
      const degraded = await health();
      expect(degraded.status).toBe(200);
      expect(degraded.body).toMatchObject({ status: 'degraded', checks: { postgres: { status: 'up' }, periodicJobs: { status: 'degraded', reason: expect.stringMatching(/^DATABASE_DIRECT_URL: /) } } });
      const ready = await api.get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.checks.periodicJobs.status).toBe('degraded');
      // Each failing job says so once in 10 s, not at every run: the webhook poller runs every
      // 500 ms, each run one refused session — five more of them, and still one line per job.
      await waitFor('a job to have logged', async () => failureLines().length > 0, 10_000, 50);
      const refusedBefore = proxy.refused();
      await waitFor('five more refused elections', async () => proxy.refused() >= refusedBefore + 5, 10_000, 50);
      const jobs = failureLines().map((l) => l.job);
      expect(jobs.length).toBe(new Set(jobs).size);
      expect(failureLines().every((l) => l.failures >= 1)).toBe(true);
      proxy.pass();
      await waitFor('the jobs to elect themselves again', async () => (await health()).body.checks?.periodicJobs?.status === 'up', 15_000, 100);
      expect((await health()).body.status).toBe('ok');
    } finally {
      await Promise.all(extra.splice(0).map((svc) => svc.kill()));
      await proxy.close();
    }
  });

  it('an api process runs no periodic job, and says nothing of them', async () => {
    const { api } = await start({});
    expect((await api.get('/health')).body.checks.periodicJobs).toBeUndefined();
  });
});

describe('10. logs', () => {
  it('after a forced database error: every line is JSON, no token and no query string reached any line', async () => {
    const s = uniqueSku('LOGS');
    expect((await h.api.putSku(s, 10)).status).toBe(200);
    const order = (await tryOrder(h.api, s)).body;
    const paymentToken = `tok_secret_${randomUUID()}`;
    const queryToken = `qtok_${randomUUID()}`;
    // The database refuses the statements that carry the secrets as parameters.
    await h.db.query(`CREATE FUNCTION hardening_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN RAISE EXCEPTION 'forced failure for a test' USING ERRCODE = 'XX000'; END $$`);
    await h.db.query(`CREATE TRIGGER hardening_refuse_update BEFORE UPDATE ON orders FOR EACH ROW WHEN (NEW.payment_token IS NOT NULL) EXECUTE FUNCTION hardening_refuse()`);
    await h.db.query(`CREATE TRIGGER hardening_refuse_insert BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION hardening_refuse()`);
    let confirm: Answer;
    let created: Answer;
    try {
      confirm = await h.api.send('POST', `/orders/${order.id}/confirm?session=${queryToken}&token=${queryToken}`, {
        body: { paymentToken },
        headers: { 'x-request-id': 'hardening-log-confirm' },
      });
      created = await h.api.send('POST', `/orders?access_token=${queryToken}`, {
        body: { customerId: 'c-logs', items: [{ sku: s, quantity: 1 }] },
        headers: { 'idempotency-key': `key-${queryToken}`, 'x-request-id': 'hardening-log-try' },
      });
    } finally {
      await h.db.query('DROP TRIGGER hardening_refuse_update ON orders');
      await h.db.query('DROP TRIGGER hardening_refuse_insert ON orders');
      await h.db.query('DROP FUNCTION hardening_refuse()');
    }
    for (const res of [confirm, created]) {
      expect([500, 503]).toContain(res.status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(res.body)).not.toMatch(/forced failure|stack|hardening_refuse/);
    }
    await waitFor('the error lines of both requests', async () =>
      ['hardening-log-confirm', 'hardening-log-try'].every((id) => h.svc.logs.some((l) => l.includes(id) && l.includes('"level":50'))),
    );
    await new Promise((r) => setTimeout(r, 300));
    const all = h.svc.logs.join('\n');
    expect(all).toContain('forced failure for a test'); // the database error itself is logged…
    for (const secret of [paymentToken, queryToken]) expect(all).not.toContain(secret); // …never what the statement carried
    const lines = h.svc.logs.map((l) => {
      try {
        return JSON.parse(l) as Record<string, any>;
      } catch {
        return l;
      }
    });
    expect(lines.filter((l) => typeof l !== 'object')).toEqual([]);
    const urls = (lines as Record<string, any>[]).map((l) => l.req?.url).filter((u) => u !== undefined);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.filter((u: string) => u.includes('?'))).toEqual([]);
    expect(all).not.toContain('session=');
  });
});

describe('17. the queue dashboard without Redis', () => {
  it('answers 503 problem+json (not a bare 500) while Redis is away; checkout goes on without it', async () => {
    const redis = await ownRedis();
    const { api } = await start({ REDIS_URL: redis.url });
    expect((await api.get('/admin/queues/api/queues', true)).status).toBe(200);
    redis.kill();
    await waitFor('Redis to be seen as down', async () => (await api.get('/health')).status === 503);
    const started = Date.now();
    const board = await api.get('/admin/queues/api/queues', true);
    expect(Date.now() - started).toBeLessThan(5000);
    expectProblem(board, 503, 'SERVICE_UNAVAILABLE');
    expect(board.headers.get('cache-control')).toBe('no-store');
    const page = await api.get('/admin/queues', true);
    expect([200, 503]).toContain(page.status);
    if (page.status === 503) expectProblem(page, 503, 'SERVICE_UNAVAILABLE');
    // Checkout does not need Redis.
    const s = uniqueSku('NOREDIS');
    expect((await api.putSku(s, 5)).status).toBe(200);
    expect((await tryOrder(api, s)).status).toBe(201);
  });
});

describe('17. the queue dashboard\'s own refusals', () => {
  it.each([
    ['an invalid query', 'GET', '/admin/queues/api/queues?status=-1', undefined, 400, 'VALIDATION_FAILED'],
    ['an unknown queue', 'GET', '/admin/queues/api/queues/no-such-queue/job-1', undefined, 404, 'NOT_FOUND'],
    ['a body that is not JSON', 'PUT', '/admin/queues/api/queues/confirm-retry/pause', '{', 400, 'MALFORMED_JSON'],
    ['a body with U+0000', 'PUT', '/admin/queues/api/queues/confirm-retry/pause', '{"a":"\\u0000"}', 400, 'VALIDATION_FAILED'],
  ])('%s is problem+json with a contract code', async (_label, method, path, raw, status, code) => {
    const res = await h.api.send(method, path, { raw, admin: true });
    expectProblem(res, status, code);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('18. RATE_LIMIT_PER_MINUTE and CUSTOMER_MAX_HOLDING_ORDERS', () => {
  it('is shared by every api process: the 7th checkout request from one address in a window (RATE_LIMIT_WINDOW_MS: the contract minute, shortened) is 429 RATE_LIMITED with Retry-After', async () => {
    const s = uniqueSku('RL');
    expect((await h.api.putSku(s, 100)).status).toBe(200);
    const prefix = `tcc-rl-${randomBytes(3).toString('hex')}`;
    const [a, b] = await Promise.all([start({ RATE_LIMIT_PER_MINUTE: '6', RATE_LIMIT_WINDOW_MS: String(RATE_WINDOW_MS), QUEUE_PREFIX: prefix }), start({ RATE_LIMIT_PER_MINUTE: '6', RATE_LIMIT_WINDOW_MS: String(RATE_WINDOW_MS), QUEUE_PREFIX: prefix })]);
    const order = (await tryOrder(h.api, s)).body;
    await roomInWindow(REDIS_URL, 6000);
    const before = await orderCount();
    const allowed = [
      await a.api.get(`/inventory/${s}`),
      await b.api.get(`/orders/${order.id}`),
      await a.api.post(`/orders/${randomUUID()}/confirm`, {}),
      await b.api.post(`/orders/${randomUUID()}/cancel`),
      await a.api.get(`/inventory/${s}`),
      await b.api.send('POST', '/orders', { body: { customerId: 'c', items: [] }, headers: { 'idempotency-key': randomUUID() } }),
    ];
    expect(allowed.map((r) => r.status)).not.toContain(429);
    for (const [api, send] of [
      [a.api, (x: Client) => tryOrder(x, s)],
      [b.api, (x: Client) => x.get(`/inventory/${s}`)],
      [a.api, (x: Client) => x.get(`/orders/${order.id}`)],
      [b.api, (x: Client) => x.post(`/orders/${order.id}/confirm`, {})],
    ] as const) {
      const res = await send(api);
      expectProblem(res, 429, 'RATE_LIMITED');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= RATE_WINDOW_MS / 1000).toBe(true);
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
    expect(await orderCount()).toBe(before); // the refused Try reserved nothing
    expect((await h.api.get(`/orders/${order.id}`)).body.status).toBe('TRY_SUCCESS'); // nor confirmed anything
    // Only the checkout routes count.
    expect((await a.api.get('/health/live')).status).toBe(200);
    expect((await a.api.get('/metrics')).status).toBe(200);
    expect((await b.api.get('/admin/orders?limit=1', true)).status).toBe(200);
    expect((await b.api.admin('PUT', `/admin/inventory/${s}`, { priceMinor: 1000, currency: 'USD', onHand: 100 })).status).toBe(200);
    await deleteQueueKeys(prefix);
  });

  it('fails open: with its Redis gone, checkout goes on (no 429, no 503, no wait)', async () => {
    const redis = await ownRedis();
    const s = uniqueSku('RLOPEN');
    expect((await h.api.putSku(s, 100)).status).toBe(200);
    const { api } = await start({ RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_WINDOW_MS: String(RATE_WINDOW_MS), REDIS_URL: redis.url });
    await roomInWindow(redis.url, 4000);
    const first = await Promise.all([1, 2, 3, 4].map(() => api.get(`/inventory/${s}`)));
    expect(first.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    redis.kill();
    await waitFor('Redis to be seen as down', async () => (await api.get('/health')).status === 503);
    for (let i = 0; i < 10; i++) {
      const started = Date.now();
      const res = i % 2 ? await api.get(`/inventory/${s}`) : await tryOrder(api, s);
      expect([res.status, Date.now() - started < 1000]).toEqual([i % 2 ? 200 : 201, true]);
    }
  });

  it('starts while its Redis is away (the start waits for it at most 2 s), and checkout goes on unlimited', async () => {
    const s = uniqueSku('RLNOREDIS');
    expect((await h.api.putSku(s, 100)).status).toBe(200);
    const { api } = await start({ RATE_LIMIT_PER_MINUTE: '3', REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => api.get(`/inventory/${s}`)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await tryOrder(api, s)).status).toBe(201);
  });

  it('is off by default: a burst from one address is never limited', async () => {
    const s = uniqueSku('RLOFF');
    expect((await h.api.putSku(s, 10)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 60 }, () => h.api.get(`/inventory/${s}`)));
    expect(new Set(answers.map((r) => r.status))).toEqual(new Set([200]));
  });

  it('CUSTOMER_MAX_HOLDING_ORDERS: HOLD_LIMIT_REACHED with `limit`, a replay still answers its order, a released order frees a slot', async () => {
    const s = uniqueSku('HOLD');
    expect((await h.api.putSku(s, 100)).status).toBe(200);
    const { api } = await start({ CUSTOMER_MAX_HOLDING_ORDERS: '2' });
    const keys = [randomUUID(), randomUUID()];
    const held = [await tryOrder(api, s, 'c-hold', keys[0]), await tryOrder(api, s, 'c-hold', keys[1])];
    expect(held.map((r) => r.status)).toEqual([201, 201]);
    const refused = await tryOrder(api, s, 'c-hold');
    expectProblem(refused, 409, 'HOLD_LIMIT_REACHED');
    expect(refused.body.limit).toBe(2);
    const replay = await tryOrder(api, s, 'c-hold', keys[0]);
    expect([200, 201]).toContain(replay.status);
    expect(replay.body.id).toBe(held[0].body.id);
    expect((await tryOrder(api, s, 'c-other')).status).toBe(201);
    expect((await api.post(`/orders/${held[0].body.id}/cancel`)).status).toBe(200);
    expect((await tryOrder(api, s, 'c-hold')).status).toBe(201);
    expect((await api.post(`/orders/${held[1].body.id}/confirm`, {})).status).toBe(200); // paid: no longer held
    expect((await tryOrder(api, s, 'c-hold')).status).toBe(201);
    expectProblem(await tryOrder(api, s, 'c-hold'), 409, 'HOLD_LIMIT_REACHED');
  });

  it('CUSTOMER_MAX_HOLDING_ORDERS under concurrency: of 16 simultaneous Trys over two processes, only the free slot is taken', async () => {
    const s = uniqueSku('HOLDC');
    expect((await h.api.putSku(s, 100)).status).toBe(200);
    const [a, b] = await Promise.all([start({ CUSTOMER_MAX_HOLDING_ORDERS: '2' }), start({ CUSTOMER_MAX_HOLDING_ORDERS: '2' })]);
    expect((await tryOrder(a.api, s, 'c-race')).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => tryOrder(i % 2 ? a.api : b.api, s, 'c-race')));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(15).fill(409)]);
    for (const r of answers.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ code: 'HOLD_LIMIT_REACHED', limit: 2 });
    const [{ n }] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE customer_id = 'c-race' AND status IN ('TRY_SUCCESS', 'CONFIRM_PENDING')`);
    expect(n).toBe(2);
    expect((await h.api.get(`/inventory/${s}`)).body.reserved).toBe(2);
  });
});

describe('19. the admin token', () => {
  it.each([['short'], ['fifteen-chars!!']])('ADMIN_TOKEN=%s (under 16 characters) stops start-up naming the variable, not its value', (token) => {
    const run = spawnSync(process.execPath, ['dist/main.js'], {
      env: { PATH: process.env.PATH, DATABASE_URL: h.db.url, REDIS_URL, ADMIN_TOKEN: token, PORT: '0' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('ADMIN_TOKEN');
    expect(run.stderr + run.stdout).not.toContain(token);
  });

  it('16 characters are enough', async () => {
    const { api } = await start({ ADMIN_TOKEN: 'sixteen-chars-ok' });
    expect((await api.send('GET', '/admin/orders?limit=1', { headers: { authorization: 'Bearer sixteen-chars-ok' } })).status).toBe(200);
  });

  it('a 401 reads the same whether a token is configured or not, and says nothing about configuration', async () => {
    const unset = await start({ ADMIN_TOKEN: '' });
    const answers: Answer[] = [];
    for (const api of [h.api, unset.api]) {
      const variants: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Bearer ${ADMIN_TOKEN}x` }];
      for (const headers of variants) {
        const res = await api.send('GET', '/admin/orders', { headers });
        expectProblem(res, 401, 'UNAUTHORIZED');
        answers.push(res);
      }
    }
    const shape = (r: Answer) => ({ body: r.body, auth: r.headers.get('www-authenticate'), cache: r.headers.get('cache-control') });
    for (const r of answers) expect(shape(r)).toEqual(shape(answers[0]));
    expect(JSON.stringify(answers[0].body)).not.toMatch(/configur|ADMIN_TOKEN|not set|unset|missing token|disabled/i);
  });

  it.each([['/docs'], ['/admin/queues']])('%s (HTML) carries security headers', async (path) => {
    const res = await h.api.get(path, true);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBeTruthy();
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('JSON answers get none of the pages\' headers (security headers are applied to the HTML paths only)', async () => {
    for (const res of [await h.api.get('/admin/orders?limit=1', true), await h.api.get('/orders/not-an-id')]) {
      expect(res.headers.get('content-type')).toMatch(/json/);
      expect(res.headers.get('content-security-policy')).toBeNull();
      expect(res.headers.get('x-frame-options')).toBeNull();
    }
  });

  it('every admin answer is Cache-Control: no-store, refusals and errors included', async () => {
    const s = uniqueSku('NOSTORE');
    const answers: [string, Answer][] = [
      ['200 PUT inventory', await h.api.admin('PUT', `/admin/inventory/${s}`, { priceMinor: 1, currency: 'USD', onHand: 1 })],
      ['200 list', await h.api.get('/admin/orders?limit=1', true)],
      ['200 reconciliation', await h.api.get('/admin/reconciliation?sinceMinutes=1', true)],
      ['200 queues', await h.api.get('/admin/queues', true)],
      ['400', await h.api.get('/admin/orders?limit=0', true)],
      ['401', await h.api.get('/admin/orders')],
      ['404', await h.api.get(`/admin/orders/${randomUUID()}`, true)],
      ['404 bad encoding', await h.api.get('/admin/orders/%ff', true)],
    ];
    for (const [what, res] of answers) expect([what, res.headers.get('cache-control')]).toEqual([what, 'no-store']);
  });
});
