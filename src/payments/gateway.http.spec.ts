import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classify, GatewayHttp } from './gateway.http.js';
import { GatewayRejectedError, GatewayUnavailableError, netCaptured } from './gateway.types.js';

describe('classify', () => {
  it('passes the statuses that carry a final answer', () => {
    expect(classify({ status: 201, body: { a: 1 } }, [201, 402])).toEqual({ status: 201, body: { a: 1 } });
    expect(classify({ status: 402, body: null }, [201, 402]).status).toBe(402);
  });

  it.each([408, 409, 425, 429, 500, 502, 503, 504, 405, 418])('treats %d as an unknown outcome', (status) => {
    expect(() => classify({ status, body: null }, [201, 402])).toThrow(GatewayUnavailableError);
  });

  it.each([400, 401, 403, 404, 422])('treats %d as a final refusal of the request', (status) => {
    expect(() => classify({ status, body: { error: 'bad' } }, [201, 402])).toThrow(GatewayRejectedError);
  });
});

describe('netCaptured', () => {
  const base = { id: 'p', amountMinor: 1000, currency: 'USD', reference: 'r', refundedMinor: 0 } as const;
  it('is what is left after refunds of a succeeded payment', () => {
    expect(netCaptured({ ...base, status: 'succeeded', refundedMinor: 300 })).toBe(700);
  });
  it('is zero for a declined payment', () => {
    expect(netCaptured({ ...base, status: 'declined' })).toBe(0);
  });
});

describe('GatewayHttp timeout', () => {
  // A gateway that answers its headers at once, then a body chunk every 100 ms, never ending: no
  // single wait reaches the timeout, only the call as a whole does.
  let server: http.Server;
  let url: string;
  let closed: Promise<void>;
  beforeEach(async () => {
    let sawClose: () => void;
    closed = new Promise((resolve) => (sawClose = resolve));
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.includes('reference=fast')) return res.end('{"data":[]}');
      res.write('{"data":[');
      const timer = setInterval(() => res.write(' '), 100);
      req.socket.on('close', () => {
        clearInterval(timer);
        sawClose();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('bounds the whole call, not only each wait: a trickling body fails as a timeout and the call is aborted', async () => {
    const client = new GatewayHttp(url, 300);
    const err = await client.listByReference('order-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayUnavailableError);
    expect((err as GatewayUnavailableError).reason).toBe('timeout');
    await closed; // the connection was given up, not left streaming
    await client.close();
  });

  it('times out only the calls still running: calls that ended in between, first, last or in the middle, are forgotten', async () => {
    const client = new GatewayHttp(url, 300);
    const refs = ['fast', 'slow', 'fast', 'slow', 'fast', 'fast'];
    const outcomes = await Promise.all(
      refs.map((ref) =>
        client.listByReference(ref).then(
          (data) => ({ ok: data }),
          (e: unknown) => ({ failed: (e as GatewayUnavailableError).reason }),
        ),
      ),
    );
    expect(outcomes).toEqual(refs.map((ref) => (ref === 'fast' ? { ok: [] } : { failed: 'timeout' })));
    // The sweeper stopped with nothing in flight; a new call is watched again.
    expect(await client.listByReference('fast')).toEqual([]);
    const late = await client.listByReference('slow').catch((e: unknown) => e);
    expect((late as GatewayUnavailableError).reason).toBe('timeout');
    await client.close();
  });
});
