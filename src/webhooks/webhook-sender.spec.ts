import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { signedHeaders, WebhookSender } from './webhook-sender.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

describe('signedHeaders', () => {
  it('verifies with the reference library, with this attempt as webhook-timestamp', () => {
    const msg = { id: randomUUID(), body: JSON.stringify({ type: 'order.reserved', data: { order: { id: 'x' } } }) };
    const at = new Date();
    const headers = signedHeaders(SECRET, msg, at);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(SECRET).verify(msg.body, headers)).toEqual(JSON.parse(msg.body));
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(msg.body, headers)).toThrow();
    expect(() => new Webhook(SECRET).verify(`${msg.body} `, headers)).toThrow();
  });
});

describe('WebhookSender', () => {
  let server: Server;
  let url: string;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  const seen: { headers: IncomingMessage['headers']; body: string }[] = [];
  const sender = new WebhookSender(300);

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        handler(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=abc`;
  });
  afterAll(async () => {
    await sender.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a 2xx is delivered, and the receiver gets the signed body it can verify', async () => {
    handler = (_req, res) => res.writeHead(204).end();
    const msg = { id: randomUUID(), body: '{"type":"order.confirmed"}' };
    await expect(sender.send(url, SECRET, msg)).resolves.toEqual({ ok: true, status: 204 });
    const got = seen[seen.length - 1];
    expect(got.headers['content-type']).toBe('application/json');
    expect(new Webhook(SECRET).verify(got.body, got.headers as Record<string, string>)).toEqual({ type: 'order.confirmed' });
  });

  it.each([
    [500, 'HTTP 500'],
    [410, 'HTTP 410'],
    [302, 'HTTP 302 (redirects are not followed)'],
  ])('%i is a failed attempt: %s', async (status, error) => {
    const before = seen.length;
    handler = (_req, res) => res.writeHead(status, status === 302 ? { location: `${url}-elsewhere` } : {}).end('nope');
    // What the receiver answered is kept for the operator: its status and the start of its body.
    await expect(sender.send(url, SECRET, { id: randomUUID(), body: '{}' })).resolves.toEqual({ ok: false, error, status, body: 'nope' });
    expect(seen.length).toBe(before + 1);
  });

  it('no answer in time is a failed attempt that names the deadline, not the URL', async () => {
    handler = () => undefined;
    const r = await sender.send(url, SECRET, { id: randomUUID(), body: '{}' });
    expect(r).toEqual({ ok: false, error: 'no answer within 300 ms' });
  });

  it('a refused connection is a failed attempt', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const r = await sender.send(`http://127.0.0.1:${port}/hook?token=abc`, SECRET, { id: randomUUID(), body: '{}' });
    expect(r).toEqual({ ok: false, error: 'request failed: ECONNREFUSED' });
  });
});
