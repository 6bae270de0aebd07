import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { REDIS_URL } from './support/env.js';
import { useHarness } from './support/harness.js';
import { uniqueSku } from './support/orders.js';
import { expectProblem } from './support/problem.js';

/**
 * The queue dashboard (/admin/queues, bull-board) is read-only (API.md, "Operator console"): every
 * write endpoint of its API — each one bull-board defines, read here from its own route table, pause
 * and resume of all queues included — answers 4xx and changes nothing, however it is spelled.
 */
const h = useHarness({ CONFIRM_RETRY_BASE_MS: '600000' });

interface BoardRoute {
  method: string;
  route: string | string[];
}
const { appRoutes } = createRequire(import.meta.url)('@bull-board/api/dist/routes.js') as { appRoutes: { api: BoardRoute[] } };
const WRITES = appRoutes.api.filter((r) => r.method.toUpperCase() !== 'GET').flatMap((r) => (Array.isArray(r.route) ? r.route : [r.route]).map((route) => ({ method: r.method.toUpperCase(), route })));

let queueName: string;
let jobId: string;

/** What a write would change: each queue's pause flag and job counts, and every key's type and size. */
async function queueState(): Promise<unknown> {
  const board = (await h.api.admin('GET', '/admin/queues/api/queues')).body.queues as { name: string; isPaused: boolean; counts: Record<string, number> }[];
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const keys = (await redis.keys(`${h.prefix}:*`)).filter((k) => !k.endsWith(':events') && !k.endsWith(':stalled-check')).sort();
    const meta = await Promise.all(keys.filter((k) => k.endsWith(':meta')).map(async (k) => [k, await redis.hgetall(k)]));
    return { board: board.map((q) => ({ name: q.name, isPaused: q.isPaused, counts: q.counts })), keys, meta };
  } finally {
    redis.disconnect();
  }
}

beforeAll(async () => {
  // A delayed retry job: something a write could act on.
  const sku = uniqueSku('BOARD');
  expect((await h.api.putSku(sku, 5)).status).toBe(200);
  const order = await h.api.order(randomUUID(), { customerId: 'c-board', items: [{ sku, quantity: 1 }] });
  await h.sim.script(['error']);
  expect((await h.api.post(`/orders/${order.body.id}/confirm`)).status).toBe(202);
  const board = (await h.api.admin('GET', '/admin/queues/api/queues?activeQueue=confirm-retry&status=delayed')).body;
  const retry = board.queues.find((q: { name: string }) => q.name === 'confirm-retry');
  expect(retry).toBeDefined();
  queueName = retry.name;
  jobId = retry.jobs[0]?.id;
  expect(jobId).toBeDefined();
});

it('bull-board defines the write routes this test walks (pause and resume of all queues among them)', () => {
  expect(WRITES.map((w) => `${w.method} ${w.route}`)).toEqual(expect.arrayContaining(['PUT /api/queues/pause', 'PUT /api/queues/resume', 'PUT /api/queues/:queueName/pause', 'POST /api/queues/:queueName/add']));
  expect(WRITES.length).toBeGreaterThanOrEqual(20);
});

it('every write endpoint answers 4xx with a contract problem, and nothing changes', async () => {
  const before = await queueState();
  const answers: string[] = [];
  for (const w of WRITES) {
    const path = `/admin/queues${w.route}`
      .replace(':queueName', encodeURIComponent(queueName))
      .replace(':jobId', encodeURIComponent(jobId))
      .replace(':queueStatus', 'delayed')
      .replace(':schedulerId', 'step');
    const body = w.method === 'PUT' || w.method === 'POST' || w.method === 'PATCH' ? { name: 'x', data: {}, delay: 0, priority: 1, concurrency: 1, max: 1, duration: 1000 } : undefined;
    const res = await h.api.send(w.method, path, { body, admin: true });
    answers.push(`${w.method} ${w.route} ${res.status}`);
    expect([`${w.method} ${w.route}`, res.status >= 400 && res.status < 500]).toEqual([`${w.method} ${w.route}`, true]);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  }
  expect(await queueState()).toEqual(before);
  // Pause all: refused, and no queue paused.
  expectProblem(await h.api.send('PUT', '/admin/queues/api/queues/pause', { admin: true }), 400, 'VALIDATION_FAILED');
  for (const q of (await h.api.admin('GET', '/admin/queues/api/queues')).body.queues) expect(q).toMatchObject({ isPaused: false, readOnlyMode: true });
});

it('other spellings of pause-all reach the same refusal; reads still work', async () => {
  for (const path of ['/admin/queues/api/queues/pause/', '/admin//queues/api/queues/pause', '/admin/queues/api/%71ueues/pause', '/ADMIN/queues/api/queues/pause']) {
    const res = await h.api.send('PUT', path, { admin: true });
    expect([path, res.status >= 400 && res.status < 500]).toEqual([path, true]);
  }
  for (const q of (await h.api.admin('GET', '/admin/queues/api/queues')).body.queues) expect(q).toMatchObject({ isPaused: false });
  expect((await h.api.admin('GET', '/admin/queues/api/queues')).status).toBe(200);
  expect((await h.api.admin('GET', `/admin/queues/api/queues/${queueName}/${jobId}`)).status).toBe(200);
  // Without a credential the refusal is 401, before anything else.
  expectProblem(await h.api.send('PUT', '/admin/queues/api/queues/pause'), 401, 'UNAUTHORIZED');
});
