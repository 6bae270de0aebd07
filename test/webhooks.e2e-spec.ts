import { randomBytes, randomUUID } from 'node:crypto';
import { inTransaction, lockWaiters } from './support/database.js';
import { useHarness } from './support/harness.js';
import { client, waitFor } from './support/http.js';
import { reserve, uniqueSku } from './support/orders.js';
import { Receiver, startReceiver } from './support/receiver.js';
import { deleteQueueKeys, HANG_ENV, startService } from './support/service.js';

/** Webhooks as an operator and a receiver see them: the admin API, signed deliveries, retries, crashes. */
const MAX_ATTEMPTS = 3;
// An attempt times out after 2 s (the contract's 5 s by default): a delivery's lease and its job's lock are 6 s, not 15.
// No Confirm is retried by itself (10 minutes apart): a retry of a charge whose answer was lost would
// otherwise settle it, CONFIRM_SUCCESS, before the Cancel its test sends.
const WEBHOOK_ENV = {
  ...HANG_ENV,
  WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
  WEBHOOK_RETRY_BASE_MS: '200',
  WEBHOOK_DELIVERY_TIMEOUT_MS: '2000',
  CONFIRM_RETRY_BASE_MS: '600000',
};
const h = useHarness(WEBHOOK_ENV);

const ALL = ['order.reserved', 'order.pending', 'order.confirmed', 'order.payment_failed', 'order.canceled', 'order.needs_attention', 'refund.succeeded'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const receivers: Receiver[] = [];

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function register(name: string, r: Receiver, events: string[] = ALL): Promise<void> {
  const res = await h.api.admin('PUT', `/admin/webhooks/${name}`, { url: r.url, events, secret: r.secret });
  expect(res.status).toBe(200);
}

async function unregister(name: string): Promise<void> {
  expect((await h.api.admin('DELETE', `/admin/webhooks/${name}`)).status).toBe(204);
}

const deliveries = (name: string, query = '') => h.api.admin('GET', `/admin/webhooks/${name}/deliveries${query}`);

const metric = async (outcome: string): Promise<number> => {
  const text = (await h.api.get('/metrics')).body as string;
  const series = `tcc_webhook_deliveries_total{outcome="${outcome}"} `;
  const line = text.split('\n').find((l) => l.startsWith(series));
  return line === undefined ? NaN : Number(line.slice(series.length));
};

const event = (r: Receiver, type: string, orderId: string) =>
  waitFor(`${type} for ${orderId}`, async () => r.received.find((x) => x.event.type === type && x.event.data.order.id === orderId), 20_000);

describe('outbox', () => {
  it('writes nothing while no endpoint is registered (the Try path pays nothing)', async () => {
    const order = await reserve(h.api, uniqueSku('NOHOOK'));
    expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(200);
    expect(await h.db.query(`SELECT 1 FROM webhook_deliveries`)).toEqual([]);
  });
});

describe('admin API', () => {
  it('PUT creates and replaces, GET lists without secrets, DELETE removes the endpoint and its deliveries', async () => {
    const r = await receiver();
    const put = await h.api.admin('PUT', '/admin/webhooks/crm.main:v1', { url: r.url, events: ['order.confirmed'], secret: r.secret });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ name: 'crm.main:v1', url: r.url, events: ['order.confirmed'] });

    const secret2 = `whsec_${randomBytes(24).toString('base64')}`;
    const replaced = await h.api.admin('PUT', '/admin/webhooks/crm.main:v1', { url: 'https://example.invalid/hooks', events: ['order.reserved', 'order.canceled'], secret: secret2 });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ name: 'crm.main:v1', url: 'https://example.invalid/hooks', events: ['order.reserved', 'order.canceled'] });

    const list = await h.api.admin('GET', '/admin/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual({
      name: 'crm.main:v1',
      url: 'https://example.invalid/hooks',
      events: ['order.reserved', 'order.canceled'],
      lastHour: { delivered: 0, failed: 0 },
      failedDeliveries: 0,
      lastFailure: null,
    });
    // How its deliveries go, never its secret.
    for (const w of list.body.data) expect(Object.keys(w).sort()).toEqual(['events', 'failedDeliveries', 'lastFailure', 'lastHour', 'name', 'url']);
    const text = JSON.stringify(list.body);
    expect(text).not.toContain(r.secret.slice(6));
    expect(text).not.toContain(secret2.slice(6));

    await reserve(h.api, uniqueSku('CRUD'));
    expect((await deliveries('crm.main:v1')).body.data).toHaveLength(1);
    await unregister('crm.main:v1');
    expect((await h.api.admin('GET', '/admin/webhooks')).body.data.map((w: { name: string }) => w.name)).not.toContain('crm.main:v1');
    expect(await h.db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_name = 'crm.main:v1'`)).toEqual([]);
    const again = await h.api.admin('DELETE', '/admin/webhooks/crm.main:v1');
    expect(again.status).toBe(404);
    expect(again.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(again.body.code).toBe('NOT_FOUND');
    expect((await deliveries('crm.main:v1')).status).toBe(404);
  });

  const valid = () => ({ url: 'https://example.com/hooks', events: ['order.confirmed'], secret: `whsec_${randomBytes(32).toString('base64')}` });
  it.each<[string, string, Record<string, unknown>]>([
    ['an ftp URL', 'url', { url: 'ftp://example.com/x' }],
    ['a URL that is not one', 'url', { url: 'not a url' }],
    ['a javascript: URL', 'url', { url: 'javascript:alert(1)' }],
    ['an empty URL', 'url', { url: '' }],
    ['no events', 'events', { events: [] }],
    ['an unknown event', 'events[0]', { events: ['order.shipped'] }],
    ['a repeated event', 'events', { events: ['order.confirmed', 'order.confirmed'] }],
    ['events as a string', 'events', { events: 'order.confirmed' }],
    ['a secret of 16 bytes', 'secret', { secret: `whsec_${randomBytes(16).toString('base64')}` }],
    ['a secret of 65 bytes', 'secret', { secret: `whsec_${randomBytes(65).toString('base64')}` }],
    ['a secret without whsec_', 'secret', { secret: randomBytes(32).toString('base64') }],
    ['a secret that is not base64', 'secret', { secret: 'whsec_!!!!not-base64!!!!not-base64!!!!' }],
    ['no secret', 'secret', { secret: undefined }],
    ['a field not in the schema', 'active', { active: true }],
  ])('PUT refuses %s: 400 VALIDATION_FAILED on %s', async (_what, field, change) => {
    const body = { ...valid(), ...change };
    const res = await h.api.admin('PUT', '/admin/webhooks/valid-name', body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    if (typeof body.secret === 'string') expect(JSON.stringify(res.body)).not.toContain(body.secret.slice(6));
  });

  it.each(['bad%20name', 'x'.repeat(65), '%ff', 'a%2Fb', 'caf%C3%A9'])('PUT refuses the name %s with 400 VALIDATION_FAILED', async (name) => {
    const res = await h.api.admin('PUT', `/admin/webhooks/${name}`, valid());
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors[0].field).toBe('name');
  });

  it('answers 404 for unknown or malformed names and delivery ids, 400 for bad listing queries', async () => {
    const r = await receiver();
    await register('queries', r, ['order.reserved']);
    expect((await deliveries('no-such-hook')).status).toBe(404);
    expect((await deliveries('%ff')).status).toBe(404);
    expect((await h.api.admin('DELETE', '/admin/webhooks/%ff')).status).toBe(404);
    expect((await h.api.admin('POST', `/admin/webhooks/no-such-hook/deliveries/${randomUUID()}/retry`)).status).toBe(404);
    expect((await h.api.admin('POST', `/admin/webhooks/queries/deliveries/${randomUUID()}/retry`)).status).toBe(404);
    expect((await h.api.admin('POST', '/admin/webhooks/queries/deliveries/not-a-uuid/retry')).status).toBe(404);
    for (const [query, field] of [
      ['?status=lost', 'status'],
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
      ['?limit=ten', 'limit'],
      ['?cursor=made-up', 'cursor'],
      [`?cursor=${Buffer.from('["2020-01-01 00:00:00+00","00000000-0000-0000-0000-000000000000"]').toString('base64url')}.${'A'.repeat(43)}`, 'cursor'],
      ['?since=yesterday', 'since'],
    ]) {
      const res = await deliveries('queries', query);
      expect([query, res.status, res.body.code]).toEqual([query, 400, 'VALIDATION_FAILED']);
      expect(res.body.errors[0].field).toBe(field);
    }
    await unregister('queries');
  });

  it('every route answers 401 without the admin token', async () => {
    const anon = client(h.svc.url, { from: 'anywhere' }); // wrong credentials, each from an address of its own
    const id = randomUUID();
    for (const [method, path] of [
      ['PUT', '/admin/webhooks/x'],
      ['GET', '/admin/webhooks'],
      ['DELETE', '/admin/webhooks/x'],
      ['GET', '/admin/webhooks/x/deliveries'],
      ['POST', `/admin/webhooks/x/deliveries/${id}/retry`],
    ]) {
      for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }] as Record<string, string>[]) {
        const res = await anon.send(method, path, { body: method === 'PUT' ? valid() : undefined, headers });
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 401, 'UNAUTHORIZED']);
      }
    }
  });

  it('/docs-json documents the routes with their operationIds', async () => {
    const doc = (await h.api.get('/docs-json')).body;
    expect(doc.paths['/admin/webhooks/{name}'].put.operationId).toBe('putWebhook');
    expect(doc.paths['/admin/webhooks/{name}'].delete.operationId).toBe('deleteWebhook');
    expect(doc.paths['/admin/webhooks'].get.operationId).toBe('listWebhooks');
    expect(doc.paths['/admin/webhooks/{name}/deliveries'].get.operationId).toBe('listWebhookDeliveries');
    expect(doc.paths['/admin/webhooks/{name}/deliveries/{id}/retry'].post.operationId).toBe('retryWebhookDelivery');
    expect(Object.keys(doc.paths['/admin/webhooks/{name}'].put.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
  });
});

describe('deliveries', () => {
  it('reserved → confirmed arrive signed, verified by the receiver, each with its own webhook-id', async () => {
    const r = await receiver();
    const confirmedOnly = await receiver();
    await register('shop', r);
    await register('confirmed-only', confirmedOnly, ['order.confirmed']);
    const order = await reserve(h.api, uniqueSku('SIGNED'), 2, 10, 1250);
    expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(200);

    const reserved = await event(r, 'order.reserved', order.id);
    const confirmed = await event(r, 'order.confirmed', order.id);
    expect(reserved.event).toEqual({ type: 'order.reserved', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), data: { order } });
    expect(confirmed.event.data.order).toMatchObject({ id: order.id, status: 'CONFIRM_SUCCESS', amountMinor: 2500, paymentId: expect.any(String) });
    for (const x of [reserved, confirmed]) {
      expect(x.id).toMatch(UUID);
      expect(Math.abs(x.timestamp - x.at)).toBeLessThanOrEqual(5);
      expect(x.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    expect(reserved.id).not.toBe(confirmed.id);
    expect(r.rejected).toBe(0);

    // The other endpoint hears only what it subscribed to.
    const other = await event(confirmedOnly, 'order.confirmed', order.id);
    expect(other.event).toEqual(confirmed.event);
    expect(other.id).toBe(confirmed.id);
    expect(confirmedOnly.has('order.reserved', order.id)).toBe(false);

    await waitFor('both listed as delivered', async () => {
      const page = (await deliveries('shop', '?status=delivered')).body.data as any[];
      return [reserved.id, confirmed.id].every((id) => page.some((d) => d.id === id));
    });
    const listed = (await deliveries('shop', '?status=delivered')).body.data as any[];
    expect(listed.find((d) => d.id === reserved.id)).toEqual({
      id: reserved.id,
      type: 'order.reserved',
      orderId: order.id,
      status: 'delivered',
      attempts: 1,
      lastError: null,
      lastStatus: null,
      lastResponse: null,
      createdAt: expect.stringMatching(/Z$/),
    });
    await unregister('confirmed-only');
    await unregister('shop');
  });

  it('order.canceled (client cancel and TTL expiry, with failureReason) and order.payment_failed', async () => {
    const r = await receiver();
    await register('outcomes', r, ['order.canceled', 'order.payment_failed']);
    const canceled = await reserve(h.api, uniqueSku('CANCEL'));
    expect((await h.api.post(`/orders/${canceled.id}/cancel`)).status).toBe(200);
    const declined = await reserve(h.api, uniqueSku('DECLINE'));
    expect((await h.api.post(`/orders/${declined.id}/confirm`, { paymentToken: 'tok_decline' })).status).toBe(402);

    // A process whose Trys hold stock for 1.5 s; the harness's worker expires them.
    const short = await startService({ ...WEBHOOK_ENV, DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api', RESERVATION_TTL_MS: '1500' });
    let expiring: any;
    try {
      expiring = await reserve(client(short.url), uniqueSku('EXPIRE'));
    } finally {
      await short.stop();
    }

    const c = await event(r, 'order.canceled', canceled.id);
    expect(c.event.data.order).toMatchObject({ status: 'CANCELED', failureReason: expect.any(String) });
    const d = await event(r, 'order.payment_failed', declined.id);
    expect(d.event.data.order).toMatchObject({ status: 'PAY_FAILED', failureReason: expect.any(String) });
    const e = await event(r, 'order.canceled', expiring.id);
    expect(e.event.data.order).toMatchObject({ status: 'CANCELED', failureReason: expect.stringMatching(/expired/) });
    expect(r.has('order.reserved', canceled.id)).toBe(false);
    await unregister('outcomes');
  });

  it('order.pending, order.needs_attention and refund.succeeded: a charge of unknown outcome, canceled, refunded late', async () => {
    const r = await receiver();
    await register('money', r);
    const order = await reserve(h.api, uniqueSku('REFUND'), 1, 10, 900);
    await h.sim.setFaults({ hangMs: 5000, refundDown: true });
    try {
      await h.sim.script(['charge_then_hang']);
      expect((await h.api.post(`/orders/${order.id}/confirm`)).status).toBe(202);
      expect((await h.api.post(`/orders/${order.id}/cancel`)).body.status).toBe('CANCELED');
      const attention = await event(r, 'order.needs_attention', order.id);
      expect(attention.event.data.order.id).toBe(order.id);
    } finally {
      await h.sim.setFaults({ refundDown: false, hangMs: 30_000 });
    }
    await event(r, 'refund.succeeded', order.id);
    expect((await event(r, 'order.pending', order.id)).event.data.order.status).toBe('CONFIRM_PENDING');
    expect((await event(r, 'order.canceled', order.id)).event.data.order.status).toBe('CANCELED');
    expect(r.unique().filter((x) => x.event.data.order.id === order.id).map((x) => x.event.type).sort()).toEqual(
      ['order.canceled', 'order.needs_attention', 'order.pending', 'order.reserved', 'refund.succeeded'],
    );
    await unregister('money');
  });

  it('a delivery answered 500 is retried with the same webhook-id and body, then delivered', async () => {
    const r = await receiver();
    r.answer = (_x, nth) => (nth === 1 ? 500 : 200);
    const retriedBefore = await metric('retried');
    const deliveredBefore = await metric('delivered');
    await register('flaky', r, ['order.reserved']);
    const order = await reserve(h.api, uniqueSku('FLAKY'));
    const first = await event(r, 'order.reserved', order.id);
    const both = await waitFor('the retry', async () => {
      const all = r.received.filter((x) => x.id === first.id);
      return all.length >= 2 ? all : undefined;
    });
    expect(both[1].body).toBe(both[0].body);
    expect(both[1].timestamp).toBeGreaterThanOrEqual(both[0].timestamp);
    await waitFor('delivered after 2 attempts', async () => {
      const d = (await deliveries('flaky')).body.data.find((x: any) => x.id === first.id);
      return d?.status === 'delivered' ? d : undefined;
    }).then((d) => expect(d).toMatchObject({ attempts: 2, lastError: 'HTTP 500', orderId: order.id }));
    expect(await metric('retried')).toBeGreaterThanOrEqual(retriedBefore + 1);
    expect(await metric('delivered')).toBeGreaterThanOrEqual(deliveredBefore + 1);
    await unregister('flaky');
  });

  it(`fails after ${MAX_ATTEMPTS} attempts, is listed as failed, and the retry route sends it again with the same webhook-id`, async () => {
    const r = await receiver();
    r.answer = () => 503;
    const failedBefore = await metric('failed');
    await register('down', r, ['order.reserved']);
    const order = await reserve(h.api, uniqueSku('DOWN'));
    const failed = await waitFor('the failed delivery', async () => {
      const page = (await deliveries('down', '?status=failed')).body.data as any[];
      return page.find((d) => d.orderId === order.id);
    });
    expect(failed).toMatchObject({ type: 'order.reserved', status: 'failed', attempts: MAX_ATTEMPTS, lastError: 'HTTP 503' });
    expect(r.received.filter((x) => x.id === failed.id)).toHaveLength(MAX_ATTEMPTS);
    expect(new Set(r.received.filter((x) => x.id === failed.id).map((x) => x.body)).size).toBe(1);
    expect(await metric('failed')).toBe(failedBefore + 1);

    // The retry is one more attempt (API.md), not a fresh round: still refused, it is failed again at once.
    const retry = await h.api.admin('POST', `/admin/webhooks/down/deliveries/${failed.id}/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ id: failed.id, status: 'pending', attempts: MAX_ATTEMPTS });
    const again = await waitFor('failed again after one attempt', async () => (await deliveries('down', '?status=failed')).body.data.find((d: any) => d.id === failed.id && d.attempts === MAX_ATTEMPTS + 1));
    expect(again).toMatchObject({ status: 'failed', lastError: 'HTTP 503' });
    // Nothing more follows: a fresh round's next attempt would be due 200 ms on, claimed within 500.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(r.received.filter((x) => x.id === failed.id)).toHaveLength(MAX_ATTEMPTS + 1);

    r.answer = () => 200;
    expect((await h.api.admin('POST', `/admin/webhooks/down/deliveries/${failed.id}/retry`)).status).toBe(202);
    await waitFor('the re-sent delivery', async () => r.received.filter((x) => x.id === failed.id).length === MAX_ATTEMPTS + 2);
    const resent = r.received.filter((x) => x.id === failed.id)[MAX_ATTEMPTS + 1];
    expect(resent.event.data.order.id).toBe(order.id);
    expect(resent.body).toBe(r.received.find((x) => x.id === failed.id)!.body);
    const delivered = await waitFor('listed as delivered', async () => (await deliveries('down', '?status=delivered')).body.data.find((d: any) => d.id === failed.id));
    expect(delivered).toMatchObject({ attempts: MAX_ATTEMPTS + 2, lastError: 'HTTP 503' });
    expect((await deliveries('down', '?status=failed')).body.data).toEqual([]);

    // A delivered one can be sent again too: once.
    expect((await h.api.admin('POST', `/admin/webhooks/down/deliveries/${failed.id}/retry`)).status).toBe(202);
    await waitFor('sent once more', async () => r.received.filter((x) => x.id === failed.id).length === MAX_ATTEMPTS + 3);

    // Nothing secret reached the log: not the signing key, not the endpoint's query token.
    const logs = h.svc.logs.join('\n');
    expect(logs).toContain(failed.id);
    for (const x of receivers) {
      expect(logs).not.toContain(x.secret.slice(6));
      expect(logs).not.toContain(new URL(x.url).search.slice(1));
    }
    await unregister('down');
  });

  it('pages through deliveries with signed cursors, oldest first', async () => {
    const r = await receiver();
    await register('pages', r, ['order.reserved']);
    const orders = [];
    for (let i = 0; i < 5; i++) orders.push((await reserve(h.api, uniqueSku('PAGE'))).id);
    await waitFor('all delivered', async () => (await deliveries('pages', '?status=delivered')).body.data.length === 5);
    const seen: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await deliveries('pages', `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.map((d) => d.orderId)).toEqual(orders);
    const first = (await deliveries('pages', '?limit=2')).body.nextCursor as string;
    const tampered = `${first.slice(0, -2)}${first.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await deliveries('pages', `?cursor=${tampered}`)).status).toBe(400);
    expect((await deliveries('pages', '?status=pending&limit=2')).body).toEqual({ data: [], nextCursor: null });
    await unregister('pages');
  });
});

describe('crash safety', () => {
  it('no event is lost when the process is SIGKILLed right after its commits', async () => {
    const r = await receiver();
    r.delayMs = 300;
    await register('durable', r, ['order.reserved', 'order.confirmed']);
    const sku = uniqueSku('DURABLE');
    expect((await h.api.putSku(sku, 1000)).status).toBe(200);
    const ids = await Promise.all(
      Array.from({ length: 30 }, async () => (await h.api.order(randomUUID(), { customerId: 'c-durable', items: [{ sku, quantity: 1 }] })).body.id as string),
    );
    const confirmed = ids.slice(0, 15);
    await Promise.all(confirmed.map(async (id) => expect((await h.api.post(`/orders/${id}/confirm`)).status).toBe(200)));
    // Killed with attempts on the wire (their jobs active, their rows leased) and events not yet claimed.
    await waitFor('attempts in flight', async () => r.inFlight > 0, 5000, 10);
    await h.svc.kill();

    const [{ n }] = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_name = 'durable' AND status = 'pending'`);
    expect(n).toBeGreaterThan(0);
    r.delayMs = 0;
    await h.restart();

    const expected = [...ids.map((id) => ['order.reserved', id]), ...confirmed.map((id) => ['order.confirmed', id])];
    await waitFor('every event', async () => expected.every(([type, id]) => r.has(type, id)), 100_000, 500);
    // An attempt the receiver got from the killed process is recorded once it is sent again: after
    // its job's lock (6 s here) has run out and two of the new worker's stalled checks (2 s apart) saw it.
    await waitFor('every delivery recorded', async () => (await h.db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_name = 'durable' AND status <> 'delivered'`)).length === 0, 40_000);
    expect(r.unique()).toHaveLength(expected.length);
    expect(r.rejected).toBe(0);
    await unregister('durable');
  }, 150_000);

  it('no event is lost when Redis loses the jobs as well: the leases run out and the poller claims them again', async () => {
    const r = await receiver();
    r.delayMs = 300;
    await register('wiped', r, ['order.reserved']);
    const sku = uniqueSku('WIPED');
    expect((await h.api.putSku(sku, 100)).status).toBe(200);
    const ids = await Promise.all(
      Array.from({ length: 10 }, async () => (await h.api.order(randomUUID(), { customerId: 'c-wiped', items: [{ sku, quantity: 1 }] })).body.id as string),
    );
    await waitFor('attempts in flight', async () => r.inFlight > 0, 5000, 10);
    await h.svc.kill();
    await deleteQueueKeys(h.prefix);
    r.delayMs = 0;
    await h.restart();
    await waitFor('every event', async () => ids.every((id) => r.has('order.reserved', id)), 60_000, 500);
    await waitFor('every delivery recorded', async () => (await h.db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_name = 'wiped' AND status <> 'delivered'`)).length === 0, 20_000);
    expect(r.rejected).toBe(0);
    await unregister('wiped');
  }, 120_000);

  it('while Redis is away the poller sends the attempts itself', async () => {
    const r = await receiver();
    r.answer = (_x, nth) => (nth === 1 ? 500 : 204);
    await register('no-redis', r, ['order.reserved']);
    await h.svc.stop();
    const away = await startService({ ...WEBHOOK_ENV, DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const order = await reserve(client(away.url), uniqueSku('NOREDIS'));
      const first = await event(r, 'order.reserved', order.id);
      await waitFor('the retry', async () => r.received.filter((x) => x.id === first.id).length === 2);
      await waitFor('delivered', async () => (await h.db.query(`SELECT 1 FROM webhook_deliveries WHERE id = $1 AND status = 'delivered' AND attempts = 2`, [first.id])).length === 1);
      expect(away.logs.join('\n')).toContain('sending them from the poller until Redis is back');
    } finally {
      await away.stop();
      await h.restart();
    }
    await unregister('no-redis');
  });
});

describe('removing an endpoint', () => {
  it('while one of its deliveries is being recorded: checkout goes on (201, not 503), then the endpoint and every delivery are gone', async () => {
    const r = await receiver();
    await register('going', r, ['order.reserved']);
    const first = await reserve(h.api, uniqueSku('GOING'), 1);
    await waitFor('the first delivery', async () => r.has('order.reserved', first.id), 10_000, 50);
    // A transaction holds the endpoint's deliveries, as the recording of an attempt does for its
    // own. A delete that takes the endpoint's row first then waits for them, and every Try that
    // emits to the endpoint waits for that row — longer than a Try's lock timeout and its retries.
    const removed = await inTransaction(h.db, async (holder) => {
      await holder.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_name = 'going' FOR UPDATE`);
      const sent = h.api.admin('DELETE', '/admin/webhooks/going');
      await waitFor('the delete to wait for the deliveries', async () => (await lockWaiters(h.db)).length > 0, 10_000, 50);
      const trys = await Promise.all(Array.from({ length: 4 }, () => h.api.order(randomUUID(), { customerId: 'c-going', items: [{ sku: first.items[0].sku, quantity: 1 }] })));
      expect(trys.map((t) => t.status)).toEqual([201, 201, 201, 201]);
      return { sent }; // awaited once the transaction has committed: the delete waits for it
    });
    expect((await removed.sent).status).toBe(204);
    expect((await h.api.admin('GET', '/admin/webhooks/going/deliveries')).status).toBe(404);
    expect(await h.db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_name = 'going'`)).toEqual([]);
  });
});
