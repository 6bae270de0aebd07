import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useHarness } from './support/harness.js';
import { HANG_ENV } from './support/service.js';
import { waitFor } from './support/http.js';
import { uniqueSku } from './support/orders.js';

/**
 * What the console's third part reads from the admin API beyond the contract (docs/API.md, the
 * "Here" notes): why a CONFIRM_PENDING order waits, orders by the start of their id, where a SKU
 * is low, what a location holds, and how a webhook endpoint's deliveries are going.
 */
const h = useHarness({
  ...HANG_ENV,
  CONFIRM_RETRY_BASE_MS: '600000',
  RESERVATION_TTL_MS: '900000',
  BREAKER_VOLUME_THRESHOLD: '3',
  BREAKER_RESET_TIMEOUT_MS: '600000',
  WEBHOOK_MAX_ATTEMPTS: '1',
  WEBHOOK_RETRY_BASE_MS: '100',
});

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

async function order(sku: string, customerId = 'c-data', extra: Record<string, unknown> = {}): Promise<any> {
  const res = await h.api.order(randomUUID(), { customerId, items: [{ sku, quantity: 1 }], ...extra });
  if (res.status !== 201) throw new Error(`Try -> ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const putLocation = (id: string, priority: number, active = true) => h.api.admin('PUT', `/admin/locations/${id}`, { name: id, priority, active });
const putStock = (sku: string, location: string, onHand: number) => h.api.admin('PUT', `/admin/inventory/${sku}/locations/${location}`, { onHand });
const putSku = (sku: string, onHand: number, lowStockThreshold = 0) =>
  h.api.admin('PUT', `/admin/inventory/${sku}`, { name: sku, priceMinor: 1000, currency: 'USD', onHand, lowStockThreshold });

describe('GET /admin/orders: idPrefix', () => {
  it('lists the orders whose id starts so (also in the counts); what no id starts with is VALIDATION_FAILED', async () => {
    const sku = uniqueSku('PFX');
    expect((await putSku(sku, 100)).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await order(sku, 'c-prefix')).id);
    for (const length of [8, 13, 20, 36]) {
      const prefix = ids[0].slice(0, length);
      const expected = ids.filter((id) => id.startsWith(prefix));
      const res = await h.api.admin('GET', `/admin/orders?idPrefix=${prefix.toUpperCase()}&limit=1000`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((o: any) => o.id)).toEqual(expect.arrayContaining(expected));
      for (const o of res.body.data) expect(o.id.startsWith(prefix)).toBe(true);
      const counts = await h.api.admin('GET', `/admin/orders/counts?idPrefix=${prefix}`);
      expect(counts.body.total).toBe(res.body.data.length);
    }
    // Combined with the other filters.
    expect((await h.api.admin('GET', `/admin/orders?idPrefix=${ids[1].slice(0, 8)}&customerId=someone-else`)).body.data).toEqual([]);
    for (const bad of ['3f2a9c1', '3f2a9c1b0', 'zzzzzzzz', `${ids[0]}0`, '3f2a9c1b--']) {
      const res = await h.api.admin('GET', `/admin/orders?idPrefix=${bad}`);
      expect({ bad, status: res.status, code: res.body.code }).toEqual({ bad, status: 400, code: 'VALIDATION_FAILED' });
    }
  });
});

describe('GET /admin/inventory: lowAt', () => {
  it('names the active locations carrying a SKU whose own available is at or below its threshold, and filters by one', async () => {
    expect((await putLocation('low-wh', 10)).status).toBe(200);
    expect((await putLocation('low-store', 20)).status).toBe(200);
    expect((await putLocation('low-shut', 30, false)).status).toBe(200);
    const spread = uniqueSku('LOWAT');
    expect((await putSku(spread, 0, 10)).status).toBe(200);
    expect((await putStock(spread, 'low-wh', 100)).status).toBe(200);
    expect((await putStock(spread, 'low-store', 4)).status).toBe(200);
    expect((await putStock(spread, 'low-shut', 0)).status).toBe(200);
    const alone = uniqueSku('LOWAT');
    expect((await putSku(alone, 5, 10)).status).toBe(200);
    const off = uniqueSku('LOWAT');
    expect((await putSku(off, 1, 0)).status).toBe(200);

    const page = await h.api.admin('GET', `/admin/inventory?skuPrefix=LOWAT-&limit=1000`);
    expect(page.status).toBe(200);
    const bySku = new Map(page.body.data.map((i: any) => [i.sku, i]));
    // Empty default left out (the SKU is kept elsewhere); the inactive location is offline, not low.
    expect((bySku.get(spread) as any).lowAt).toEqual(['low-store']);
    expect((bySku.get(alone) as any).lowAt).toEqual(['default']);
    expect((bySku.get(off) as any).lowAt).toEqual([]);

    const atStore = await h.api.admin('GET', `/admin/inventory?skuPrefix=LOWAT-&lowAt=low-store`);
    expect(atStore.body.data.map((i: any) => i.sku)).toEqual([spread]);
    // The SKU's own low stock (its total) is as the contract says: 104 available is not low.
    const low = await h.api.admin('GET', `/admin/inventory?skuPrefix=LOWAT-&lowStock=true`);
    expect(low.body.data.map((i: any) => i.sku)).toEqual([alone]);
    // Low in all or at some location.
    const anywhere = await h.api.admin('GET', `/admin/inventory?skuPrefix=LOWAT-&lowAnywhere=true`);
    expect(anywhere.body.data.map((i: any) => i.sku).sort()).toEqual([spread, alone].sort());
    expect((await h.api.admin('GET', `/admin/inventory?lowAt=bad%20id`)).status).toBe(400);
    expect((await h.api.admin('GET', `/admin/inventory?lowAt=nowhere`)).body.data).toEqual([]);
  });
});

describe('GET /admin/locations/{id}/usage', () => {
  it('counts the holding orders and reserved branches with stock there, the SKUs with stock there, and the units reserved', async () => {
    expect((await putLocation('use-store', 5)).status).toBe(200);
    const a = uniqueSku('USE');
    const b = uniqueSku('USE');
    expect((await putSku(a, 0)).status).toBe(200);
    expect((await putSku(b, 0)).status).toBe(200);
    expect((await putStock(a, 'use-store', 10)).status).toBe(200);
    expect((await putStock(b, 'use-store', 3)).status).toBe(200);
    const empty = await h.api.admin('GET', '/admin/locations/use-store/usage');
    expect(empty.body).toEqual({ locationId: 'use-store', holdingOrders: 0, reservedBranches: 0, skusWithStock: 2, reservedUnits: 0 });

    const held = await order(a, 'c-use', { locationIds: ['use-store'] });
    await order(b, 'c-use', { locationIds: ['use-store'] });
    const done = await order(a, 'c-use', { locationIds: ['use-store'] });
    expect((await h.api.post(`/orders/${done.id}/cancel`)).status).toBe(200);
    expect((await h.api.admin('POST', '/tcc/inventory/try', { transactionId: randomUUID(), items: [{ sku: a, quantity: 2 }], locationIds: ['use-store'] })).status).toBe(200);
    const used = await h.api.admin('GET', '/admin/locations/use-store/usage');
    expect(used.status).toBe(200);
    expect(used.body).toEqual({ locationId: 'use-store', holdingOrders: 2, reservedBranches: 1, skusWithStock: 2, reservedUnits: 4 });
    expect(held.items[0].allocations).toEqual([{ locationId: 'use-store', quantity: 1 }]);

    for (const id of ['no-such-place', 'bad%20id']) {
      const res = await h.api.admin('GET', `/admin/locations/${id}/usage`);
      expect({ id, status: res.status, code: res.body.code }).toEqual({ id, status: 404, code: 'NOT_FOUND' });
    }
  });
});

describe('webhooks: the last hour, the last failure with its status and body, "Resend failed"', () => {
  let server: Server;
  let status = 500;
  let url: string;
  const body = `{"error":"warehouse DB down"}\u0000\u001b[31m\u202e${'x'.repeat(400)}`;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(status === 204 ? undefined : body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('keeps what the receiver answered; the overview counts the last hour; Resend failed sends every failed one again', async () => {
    expect((await h.api.admin('PUT', '/admin/webhooks/warehouse', { url, events: ['order.reserved'], secret: SECRET })).status).toBe(200);
    expect((await h.api.admin('PUT', '/admin/webhooks/unused', { url, events: ['refund.succeeded'], secret: SECRET })).status).toBe(200);
    const sku = uniqueSku('HOOK');
    expect((await putSku(sku, 100)).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await order(sku, 'c-hook')).id);
    const failed = await waitFor('three failed deliveries', async () => {
      const r = await h.api.admin('GET', '/admin/webhooks/warehouse/deliveries?status=failed');
      return r.body.data.length === 3 ? r.body.data : undefined;
    });
    // One line, the escape and direction characters gone, its first 200 characters.
    const kept = `{"error":"warehouse DB down"} [31m ${'x'.repeat(165)}`;
    expect(kept).toHaveLength(200);
    for (const d of failed) expect(d).toMatchObject({ status: 'failed', lastError: 'HTTP 500', lastStatus: 500, lastResponse: kept });

    const list = await h.api.admin('GET', '/admin/webhooks');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const [unused, warehouse] = list.body.data;
    expect(unused).toEqual({ name: 'unused', url, events: ['refund.succeeded'], lastHour: { delivered: 0, failed: 0 }, failedDeliveries: 0, lastFailure: null });
    expect(warehouse).toMatchObject({ name: 'warehouse', lastHour: { delivered: 0, failed: 3 }, failedDeliveries: 3 });
    expect(warehouse.lastFailure).toEqual({ at: expect.any(String), deliveryId: expect.any(String), error: 'HTTP 500', httpStatus: 500, body: kept });
    expect(failed.map((d: any) => d.id)).toContain(warehouse.lastFailure.deliveryId);

    status = 204;
    const resent = await h.api.admin('POST', '/admin/webhooks/warehouse/deliveries/retry-failed');
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual({ resent: 3 });
    await waitFor('the three delivered', async () => (await h.api.admin('GET', '/admin/webhooks/warehouse/deliveries?status=delivered')).body.data.length === 3);
    const after = (await h.api.admin('GET', '/admin/webhooks')).body.data[1];
    expect(after).toMatchObject({ lastHour: { delivered: 3, failed: 0 }, failedDeliveries: 0 });
    expect(after.lastFailure.httpStatus).toBe(500); // the last failure stays, with its time
    expect((await h.api.admin('POST', '/admin/webhooks/warehouse/deliveries/retry-failed')).body).toEqual({ resent: 0 });
    expect((await h.api.admin('POST', '/admin/webhooks/nobody/deliveries/retry-failed')).status).toBe(404);
    expect((await h.api.admin('POST', '/admin/webhooks/warehouse/deliveries/retry-failed', { all: true })).status).toBe(400);

    // A receiver that does not answer at all: no status, no body.
    expect((await h.api.admin('PUT', '/admin/webhooks/warehouse', { url: 'http://127.0.0.1:9/hook', events: ['order.reserved'], secret: SECRET })).status).toBe(200);
    const lost = (await order(sku, 'c-hook')).id;
    const refused = await waitFor('the refused delivery', async () => {
      const r = await h.api.admin('GET', '/admin/webhooks/warehouse/deliveries?status=failed');
      return r.body.data.find((d: any) => d.orderId === lost);
    });
    expect(refused).toMatchObject({ lastError: expect.stringMatching(/^request failed: /), lastStatus: null, lastResponse: null });
    expect((await h.api.admin('GET', '/admin/webhooks')).body.data[1].lastFailure).toMatchObject({ httpStatus: null, body: null });
  });
});

describe('admin order JSON: lastOutcome, why a CONFIRM_PENDING order waits', () => {
  it('says the last gateway outcome in words (timed out, error 503, breaker open); null for other states', async () => {
    const sku = uniqueSku('WAIT');
    expect((await putSku(sku, 100)).status).toBe(200);
    const held = await order(sku, 'c-wait');
    expect((await h.api.admin('GET', `/admin/orders/${held.id}`)).body.lastOutcome).toBeNull();

    const pend = async (fault: () => Promise<void>) => {
      const o = await order(sku, 'c-wait');
      await fault();
      expect((await h.api.post(`/orders/${o.id}/confirm`)).status).toBe(202);
      return (await h.api.admin('GET', `/admin/orders/${o.id}`)).body;
    };
    const timedOut = await pend(() => h.sim.script(['hang']));
    expect(timedOut.lastOutcome).toEqual({ step: 'charge', reason: 'timeout', httpStatus: null, text: 'gateway timed out', at: expect.any(String) });
    const erred = await pend(() => h.sim.script(['error']));
    expect(erred.lastOutcome).toMatchObject({ reason: 'error', httpStatus: 500, text: 'gateway error 500' });
    const down = await pend(() => h.sim.setFaults({ down: true }));
    expect(down.lastOutcome).toMatchObject({ reason: 'error', httpStatus: 503, text: 'gateway error 503' });
    // Three failures in a row: the breaker opens, and the next charge is not sent.
    const rejected = await pend(async () => undefined);
    expect(rejected.lastOutcome).toMatchObject({ step: 'charge', reason: 'circuit_open', text: 'breaker open' });
    expect(rejected.confirmAttempts).toBe(0);

    const list = await h.api.admin('GET', `/admin/orders?status=CONFIRM_PENDING&customerId=c-wait&sort=newest`);
    expect(list.body.data.map((o: any) => o.lastOutcome.text)).toEqual(['breaker open', 'gateway error 503', 'gateway error 500', 'gateway timed out']);
    const others = await h.api.admin('GET', `/admin/orders?status=TRY_SUCCESS&customerId=c-wait`);
    expect(others.body.data.map((o: any) => o.lastOutcome)).toEqual([null]);

    // The payment look-up says why it cannot answer.
    const lookup = await h.api.admin('GET', `/admin/orders/${erred.id}/payment`);
    expect(lookup.status).toBe(503);
    expect(lookup.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', reason: 'circuit_open' });
    await h.sim.setFaults({ down: false });
  });
});
