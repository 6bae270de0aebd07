/**
 * The HTTP ceiling of the sold-out workload: bare node:http reading a JSON body and answering a
 * fixed 409 problem — what no framework, validation or database costs. BENCH_PORT; SO_REUSEPORT,
 * so several processes share the port like the service's.
 */
import http from 'node:http';

const body = JSON.stringify({
  type: 'https://tcc-inventory.dev/problems/insufficient-stock',
  title: 'Conflict',
  status: 409,
  detail: 'only 0 of SOLDOUT available, 1 requested',
  code: 'INSUFFICIENT_STOCK',
  sku: 'SOLDOUT',
  requested: 1,
  available: 0,
});

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(409, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 75_000;
server.listen({ port: Number(process.env.BENCH_PORT ?? 0), host: '127.0.0.1', reusePort: true }, () => {
  process.stdout.write(`listening ${JSON.stringify(server.address())}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
