import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type CircuitBreaker from 'opossum';
import { AppConfig } from '../config/app-config.js';
import { parseEnv } from '../config/env.schema.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { PaymentGateway } from './payment-gateway.js';

describe('PaymentGateway breaker', () => {
  // A gateway that answers 503 (an unknown outcome: a breaker failure) to every charge whose
  // reference starts with "fail", and charges the others.
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { reference, amountMinor } = JSON.parse(body) as { reference: string; amountMinor: number };
        res.writeHead(reference.startsWith('fail') ? 503 : 201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: `pay-${reference}`, status: 'succeeded', amountMinor, currency: 'EUR', reference, refundedMinor: 0 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const gateway = (env: Record<string, string>) =>
    new PaymentGateway(new AppConfig(parseEnv({ PAYMENT_GATEWAY_URL: url, ...env })), new MetricsService());
  const charge = (gw: PaymentGateway, reference: string) => gw.charge({ idempotencyKey: `k-${reference}`, amountMinor: 100, currency: 'EUR', reference, paymentToken: undefined, requestId: undefined });

  it('keeps no list of call latencies: a failure sums counters instead of sorting every latency of the window', async () => {
    const gw = gateway({ BREAKER_VOLUME_THRESHOLD: '10', BREAKER_ERROR_THRESHOLD_PERCENT: '50' });
    for (let i = 0; i < 40; i++) expect((await charge(gw, `ok-${i}`)).kind).toBe('succeeded');
    expect((await charge(gw, 'fail-1')).kind).toBe('unknown');
    const stats = (gw as unknown as { breaker: CircuitBreaker }).breaker.stats;
    expect(stats.fires).toBe(41);
    expect(stats.failures).toBe(1);
    expect(stats.latencyTimes).toEqual([]);
    expect(gw.state).toBe('closed');
    await gw.onApplicationShutdown();
  });

  it('still opens on the error rate over the volume threshold, and then rejects without calling', async () => {
    const gw = gateway({ BREAKER_VOLUME_THRESHOLD: '4', BREAKER_ERROR_THRESHOLD_PERCENT: '50', BREAKER_RESET_TIMEOUT_MS: '60000' });
    expect((await charge(gw, 'ok-a')).kind).toBe('succeeded');
    for (let i = 0; i < 3; i++) expect((await charge(gw, `fail-${i}`)).kind).toBe('unknown');
    expect(gw.state).toBe('open');
    const rejected = await charge(gw, 'ok-b');
    expect(rejected).toMatchObject({ kind: 'unknown', reason: 'circuit_open' });
    await gw.onApplicationShutdown();
  });
});
