import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  event: { type: string; timestamp: string; data: { order: any } };
  /** Unix seconds when it arrived. */
  at: number;
}

export interface Receiver {
  /** Its URL (with a query token, which must never reach a log). */
  url: string;
  secret: string;
  /** Every request that verified, in arrival order (duplicates included). */
  received: Received[];
  /** Requests whose signature did not verify. */
  rejected: number;
  /** Verified requests not answered yet (see delayMs). */
  inFlight: number;
  /** Decides each verified request's status (default 204), after `delayMs`. */
  answer: (r: Received, nth: number) => number;
  delayMs: number;
  /** The first verified arrival of each webhook-id. */
  unique(): Received[];
  has(type: string, orderId: string): boolean;
  close(): Promise<void>;
}

/**
 * A webhook endpoint of the test's own: verifies every request with the Standard Webhooks
 * reference library (`Webhook.verify`) under its own secret, as a real receiver would.
 */
export async function startReceiver(): Promise<Receiver> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const wh = new Webhook(secret);
  const seen = new Map<string, number>();
  const r = {
    url: '',
    secret,
    received: [] as Received[],
    rejected: 0,
    inFlight: 0,
    answer: () => 204,
    delayMs: 0,
    unique() {
      const first = new Map<string, Received>();
      for (const x of r.received) if (!first.has(x.id)) first.set(x.id, x);
      return [...first.values()];
    },
    has(type: string, orderId: string) {
      return r.received.some((x) => x.event.type === type && x.event.data.order.id === orderId);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  } as Receiver;

  const handle = async (req: IncomingMessage, body: string): Promise<number> => {
    const headers = req.headers as Record<string, string>;
    let event: Received['event'];
    try {
      event = wh.verify(body, headers) as Received['event'];
    } catch {
      r.rejected += 1;
      return 401;
    }
    const got: Received = {
      id: headers['webhook-id'],
      timestamp: Number(headers['webhook-timestamp']),
      signature: headers['webhook-signature'],
      body,
      event,
      at: Math.floor(Date.now() / 1000),
    };
    r.received.push(got);
    const nth = (seen.get(got.id) ?? 0) + 1;
    seen.set(got.id, nth);
    r.inFlight += 1;
    try {
      if (r.delayMs) await new Promise((resolve) => setTimeout(resolve, r.delayMs));
      return r.answer(got, nth);
    } finally {
      r.inFlight -= 1;
    }
  };

  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      void handle(req, body).then((status) => res.writeHead(status).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/tcc?token=${randomBytes(8).toString('hex')}`;
  return r;
}
