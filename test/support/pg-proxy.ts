import net from 'node:net';

export interface PgProxy {
  /** postgres:// URL of `databaseUrl`, through the proxy. */
  url: string;
  /** Pipe new connections through to Postgres. */
  pass(): void;
  /**
   * Answer every new connection's start-up as a Postgres server refusing it would: an
   * ErrorResponse (FATAL, the given SQLSTATE) and a hang-up. Connections already open are cut.
   */
  refuse(sqlState: string, message: string): void;
  /**
   * Go dark, as a host that vanished without a reset: connections stay open but nothing passes
   * either way, and new ones are accepted and never answered. `pass()` lets new connections through
   * again (the dark ones stay dark).
   */
  blackhole(): void;
  /** Connections refused so far (each start-up answered with the refusal). */
  refused(): number;
  close(): Promise<void>;
}

/** A FATAL ErrorResponse ('E') as Postgres sends it before closing the connection. */
function fatal(sqlState: string, message: string): Buffer {
  const fields = Buffer.concat([
    ...[
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', sqlState],
      ['M', message],
    ].map(([k, v]) => Buffer.concat([Buffer.from(k, 'ascii'), Buffer.from(v, 'utf8'), Buffer.from([0])])),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(5);
  head.write('E', 0, 'ascii');
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * A TCP stand-in for the Postgres server in front of the real one, so a test can make "Postgres"
 * refuse connections with any SQLSTATE (57P03 starting up, 53300 too many clients…) without
 * touching the shared server.
 */
export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  let refusal: { sqlState: string; message: string } | undefined;
  let dark = false;
  let refused = 0;
  const open = new Set<net.Socket>();
  const pairs = new Set<[net.Socket, net.Socket]>();

  const server = net.createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => undefined);
    if (dark) {
      client.pause();
      return;
    }
    if (refusal) {
      const { sqlState, message } = refusal;
      refused += 1;
      // Wait for the start-up packet (or an SSLRequest), then refuse as the server would.
      client.once('data', (first: Buffer) => {
        const sslRequest = first.length === 8 && first.readInt32BE(4) === 80877103;
        if (sslRequest) {
          client.write('N');
          client.once('data', () => client.end(fatal(sqlState, message)));
        } else {
          client.end(fatal(sqlState, message));
        }
      });
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    open.add(upstream);
    upstream.on('close', () => {
      open.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    client.on('close', () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);

  return {
    url: url.toString(),
    pass: () => {
      refusal = undefined;
      dark = false;
    },
    refused: () => refused,
    blackhole: () => {
      dark = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    refuse: (sqlState, message) => {
      refusal = { sqlState, message };
      for (const s of open) s.destroy();
    },
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
