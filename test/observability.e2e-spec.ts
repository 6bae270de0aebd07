import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { useHarness } from './support/harness.js';
import { waitFor } from './support/http.js';
import { reserve, uniqueSku } from './support/orders.js';
import { startService } from './support/service.js';

/**
 * Every role can be scraped and probed (OPS_PORT), every counter exists from start-up, the alert
 * rules are valid and fire when they should, and X-Request-Id follows a request from its answer to
 * its log lines and the gateway call it causes.
 */
// The service as shipped: with its V8 flags (the suite's other files turn them off, FAST_ENV).
const h = useHarness({ CONFIRM_RETRY_BASE_MS: '600000', TCC_V8_FLAGS: 'on' });

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const line = (text: string, series: string) => text.split('\n').find((l) => l.startsWith(`${series} `));

describe('alert rules (ops/alerts.yml)', () => {
  it('pass promtool check rules and the rule unit tests', () => {
    let promtool: string;
    try {
      promtool = execFileSync('sh', ['-c', 'command -v promtool']).toString().trim();
    } catch {
      throw new Error("promtool is missing: install Debian's prometheus package (.ci/run does)");
    }
    expect(execFileSync(promtool, ['check', 'rules', 'ops/alerts.yml']).toString()).toMatch(/SUCCESS: \d+ rules found/);
    expect(execFileSync(promtool, ['test', 'rules', 'ops/alerts.test.yml']).toString()).toMatch(/SUCCESS/);
  });
});

describe('OPS_PORT', () => {
  it("a worker's only port serves /metrics and /health*, every counter at 0 from start-up", async () => {
    const opsPort = await freePort();
    const worker = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'worker', OPS_PORT: String(opsPort) });
    try {
      expect(worker.url).toBe('');
      const base = `http://127.0.0.1:${opsPort}`;
      const metrics = await (await fetch(`${base}/metrics`)).text();
      for (const outcome of ['success', 'declined', 'timeout', 'error', 'circuit_open']) {
        expect(line(metrics, `tcc_confirm_attempts_total{outcome="${outcome}"}`)).toBe(`tcc_confirm_attempts_total{outcome="${outcome}"} 0`);
      }
      for (const outcome of ['delivered', 'retried', 'failed']) expect(line(metrics, `tcc_webhook_deliveries_total{outcome="${outcome}"}`)).toMatch(/ 0$/);
      for (const reason of ['declined', 'refused', 'exhausted']) expect(line(metrics, `tcc_confirm_failures_total{reason="${reason}"}`)).toMatch(/ 0$/);
      for (const reason of ['refund_failing', 'reconciliation_mismatch', 'capture_on_force_confirmed']) {
        expect(line(metrics, `tcc_orders_need_attention_total{reason="${reason}"}`)).toMatch(/ 0$/);
      }
      expect(line(metrics, 'tcc_gateway_refusals_total{operation="charge",status="401"}')).toMatch(/ 0$/);
      for (const gauge of ['tcc_payment_circuit_state', 'tcc_orders_needing_attention', 'tcc_reconciliation_last_success_timestamp_seconds', 'tcc_participant_oldest_reserved_age_seconds', 'tcc_oldest_holding_order_age_seconds', 'tcc_inventory_low_stock_skus', 'tcc_inventory_mismatches']) {
        expect(line(metrics, gauge)).toBeDefined();
      }
      expect(metrics).toMatch(/^tcc_orders_by_status\{status="TRY_SUCCESS"\} \d+$/m);
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
      const ready = await fetch(`${base}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ok', checks: { postgres: { status: 'up' }, redis: { status: 'up' } } });
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect((await fetch(`${base}/orders/${randomUUID()}`)).status).toBe(404); // nothing else there
    } finally {
      await worker.stop();
    }
  });

  it('ready stays 200 with Redis away (degraded), because checkout keeps working; /health says 503', async () => {
    const redisPort = await freePort();
    const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const opsPort = await freePort();
    const api = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api', OPS_PORT: String(opsPort), REDIS_URL: `redis://127.0.0.1:${redisPort}` });
    try {
      await waitFor('ready', async () => (await fetch(`http://127.0.0.1:${opsPort}/health/ready`)).status === 200);
      redis.kill('SIGKILL');
      await waitFor('degraded', async () => {
        const res = await fetch(`${api.url}/health/ready`);
        const body = (await res.json()) as { status: string; checks: { redis: { status: string } } };
        return res.status === 200 && body.status === 'degraded' && body.checks.redis.status === 'degraded';
      });
      expect((await fetch(`${api.url}/health`)).status).toBe(503);
      expect((await fetch(`${api.url}/health/live`)).status).toBe(200);
    } finally {
      redis.kill('SIGKILL');
      await api.kill();
    }
  });
});

describe('X-Request-Id', () => {
  it('echoes a valid one and makes a new one otherwise, on every kind of answer', async () => {
    const given = 'req-obs.1:A_b-2';
    const ok = await h.api.send('GET', `/inventory/NOPE-${randomUUID()}`, { headers: { 'x-request-id': given } });
    expect(ok.headers.get('x-request-id')).toBe(given);
    for (const bad of ['', 'x'.repeat(129), 'has space', 'semi;colon']) {
      const res = await h.api.send('GET', '/health/live', { headers: bad === '' ? {} : { 'x-request-id': bad } });
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(id).not.toBe(bad);
    }
    const answers = [
      await h.api.send('GET', '/admin/orders'), // 401
      await h.api.send('POST', '/orders', { raw: '{', headers: { 'idempotency-key': 'k' } }), // 400 malformed
      await h.api.send('GET', '/orders/%ff'), // framework error
      await h.api.send('GET', '/no/such/route'), // 404
      await h.api.send('POST', `/orders/${randomUUID()}/confirm`), // 404 from a handler
    ];
    for (const a of answers) expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('is on the log line of its request and on the gateway call the request causes', async () => {
    const seen: string[] = [];
    // A recording hop in front of the gateway simulator.
    const hop = http.createServer((req, res) => {
      seen.push(String(req.headers['x-request-id'] ?? ''));
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
        const up = await fetch(`${h.sim.url}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
        res.writeHead(up.status, { 'content-type': 'application/json' }).end(await up.text());
      });
    });
    await new Promise<void>((r) => hop.listen(0, '127.0.0.1', () => r()));
    const api = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: `http://127.0.0.1:${(hop.address() as AddressInfo).port}`, QUEUE_PREFIX: h.prefix, ROLE: 'api' });
    try {
      const { client } = await import('./support/http.js');
      const c = client(api.url);
      const order = await reserve(c, uniqueSku('RID'), 1);
      const rid = `rid-${randomUUID()}`;
      const res = await c.post(`/orders/${order.id}/confirm`, { paymentToken: 'tok_x' }, { 'x-request-id': rid });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe(rid);
      expect(seen).toContain(rid);
      await waitFor('the request log line', async () => api.logs.some((l) => l.includes(rid) && l.includes('request completed')));
      const lines = api.logs.filter((l) => l.includes(rid)).map((l) => JSON.parse(l));
      expect(lines[0]).toMatchObject({ req: { id: rid, method: 'POST' }, orderId: order.id });
    } finally {
      await api.stop();
      hop.close();
    }
  });
});

describe('log lines at shutdown', () => {
  it('SIGTERM right after a request: its access-log line still reaches stdout (buffered lines are flushed at shutdown, not lost)', async () => {
    const api = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api' });
    const rid = `rid-${randomUUID()}`;
    const res = await fetch(`${api.url}/orders/${randomUUID()}`, { headers: { 'x-request-id': rid } });
    expect(res.status).toBe(404);
    // At once: well inside the 100 ms the logger may hold a line before writing it.
    expect(await api.stop()).toBe(0);
    const lines = api.logs.filter((l) => l.includes(rid));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ msg: 'request completed', req: { id: rid, method: 'GET' }, res: { statusCode: 404 } });
  });
});

describe('tcc_holding_overdue_seconds (what TccHoldingOrdersStuck watches)', () => {
  it('is 0 while every holding order has its next step ahead, and how late the most overdue one is when nothing runs it', async () => {
    await h.svc.stop(); // no worker, no sweeper: nothing will run the overdue order
    const api = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, ROLE: 'api' });
    try {
      const { client } = await import('./support/http.js');
      const c = client(api.url);
      const order = await reserve(c, uniqueSku('DUE'), 1); // expires in RESERVATION_TTL_MS
      const gauge = async () => Number(line((await c.get('/metrics')).body as string, 'tcc_holding_overdue_seconds')?.split(' ')[1]);
      expect(await gauge()).toBe(0);
      // A long-held order (extended, say) is not overdue: only a step past its time is.
      await h.db.query(`UPDATE orders SET created_at = now() - interval '50 minutes' WHERE id = $1`, [order.id]);
      expect(await gauge()).toBe(0);
      await h.db.query(`UPDATE orders SET reservation_expires_at = now() - interval '10 minutes' WHERE id = $1`, [order.id]);
      const late = await gauge();
      expect(late).toBeGreaterThanOrEqual(600);
      expect(late).toBeLessThan(700);
      // A retry or lease that is due counts too (least of expiry and next step).
      await h.db.query(`UPDATE orders SET reservation_expires_at = now() + interval '10 minutes', next_action_at = now() - interval '3 minutes' WHERE id = $1`, [order.id]);
      expect(Math.floor(await gauge())).toBeGreaterThanOrEqual(180);
    } finally {
      await api.stop();
      await h.restart();
    }
  });
});

describe('runtime flags (src/runtime-flags.ts)', () => {
  const argv = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

  it('the service re-executes itself in place with its heap caps and without allocation-site pretenuring', () => {
    const args = argv(h.svc.proc.pid!); // the same PID as spawned: execve replaced the program in place
    expect(args.filter((a) => a.startsWith('--'))).toEqual(['--max-semi-space-size=16', '--max-old-space-size=192', '--no-allocation-site-pretenuring']);
    expect(args.some((a) => a.endsWith('dist/main.js'))).toBe(true);
  });

  it('TCC_V8_FLAGS=off leaves the runtime as started', async () => {
    const svc = await startService({ DATABASE_URL: h.db.url, PAYMENT_GATEWAY_URL: h.sim.url, QUEUE_PREFIX: h.prefix, TCC_V8_FLAGS: 'off' });
    try {
      const args = argv(svc.proc.pid!);
      expect(args).toContain('dist/main.js');
      expect(args.filter((a) => a.startsWith('--'))).toEqual([]);
    } finally {
      await svc.stop();
    }
  });
});
