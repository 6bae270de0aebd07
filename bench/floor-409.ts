/**
 * The floor of the sold-out workload: the least any implementation of the contract's refusal does,
 * written without the service's framework, settings, metrics or error mapping. Per request: read
 * and parse the JSON body, check its shape, hash it (the Idempotency-Key's binding), ask Postgres —
 * one `tcc_probe` call per batch, batched as the service batches — whether the key already made an
 * order and what the SKU has left, then answer the 409 problem with its X-Request-Id and write one
 * access-log line. A refusal cannot skip the database:
 * a key that made an order before is answered that order, whatever the stock says now.
 *
 * Not judged against a goal: it says how much of the gap between the service and bare node:http
 * any implementation on this stack would keep (BENCHMARKS.md). BENCH_PORT, BENCH_DATABASE_URL,
 * BENCH_LOG (the log file); SO_REUSEPORT, like the service's processes.
 */
import { hash, randomUUID } from 'node:crypto';
import { openSync, write } from 'node:fs';
import http from 'node:http';
import pg from 'pg';

interface Waiting {
  key: string;
  hash: string;
  items: { sku: string; quantity: number }[];
  answer(row: ProbeRow): void;
}

interface ProbeRow {
  r_idx: number;
  r_outcome: string;
  r_sku: string | null;
  r_requested: number | null;
  r_available: number | null;
}

const PROBE = `SELECT r_idx, r_outcome, r_body, r_sku, r_requested, r_available, r_location
  FROM tcc_probe($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[])`;

const db = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL });
await db.connect();

const logFd = openSync(process.env.BENCH_LOG ?? '/dev/null', 'a');
let logLines: string[] = [];
let logArmed = false;
function logLine(line: string): void {
  logLines.push(line);
  if (logArmed) return;
  logArmed = true;
  setTimeout(() => {
    const text = logLines.join('');
    logLines = [];
    logArmed = false;
    write(logFd, text, () => undefined);
  }, 10);
}

/**
 * The batch waits as the service's group commit does (src/common/batcher.ts): one call in flight;
 * while it runs, arrivals wait; then a batch leaves once as many wait as the largest of the last
 * 16 batches (the convoy is in), or after 2 ms (TRY_BATCH_WINDOW_MS's default). Without the wait,
 * batches are half as full and Postgres spends twice as much a refusal.
 */
const WINDOW_MS = 2;
const recent = new Array<number>(16).fill(0);
let recentAt = 0;
let waiting: Waiting[] = [];
let inFlight = false;
let timer: NodeJS.Timeout | undefined;

function arrived(): void {
  if (inFlight) return; // the batch's end sends what waits
  if (waiting.length >= Math.max(...recent)) {
    clearTimeout(timer);
    timer = undefined;
    setImmediate(probe);
  } else timer ??= setTimeout(probe, WINDOW_MS);
}

function probe(): void {
  timer = undefined;
  if (inFlight || waiting.length === 0) return;
  const batch = waiting;
  waiting = [];
  inFlight = true;
  recent[recentAt] = batch.length;
  recentAt = (recentAt + 1) % recent.length;
  const lineOrder: number[] = [];
  const skus: string[] = [];
  const quantities: number[] = [];
  batch.forEach((w, i) => {
    for (const l of w.items) {
      lineOrder.push(i + 1);
      skus.push(l.sku);
      quantities.push(l.quantity);
    }
  });
  const params = [batch.map((w) => w.key), batch.map((w) => w.hash), lineOrder, skus, quantities, [], []];
  db.query<ProbeRow>(PROBE, params).then(
    ({ rows }) => {
      for (const row of rows) if (row.r_idx > 0) batch[row.r_idx - 1].answer(row);
      inFlight = false;
      if (waiting.length > 0) arrived();
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

function shapeOk(body: unknown, key: unknown): body is { customerId: string; items: { sku: string; quantity: number }[] } {
  if (typeof key !== 'string' || typeof body !== 'object' || body === null) return false;
  const b = body as { customerId?: unknown; items?: unknown };
  if (typeof b.customerId !== 'string' || !Array.isArray(b.items) || b.items.length === 0) return false;
  return b.items.every((l: { sku?: unknown; quantity?: unknown }) => typeof l.sku === 'string' && Number.isInteger(l.quantity));
}

const server = http.createServer((req, res) => {
  const started = performance.now();
  const requestId = randomUUID();
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  req.on('data', (c: Buffer) => {
    if (first === undefined) first = c;
    else (more ??= [first]).push(c);
  });
  req.on('end', () => {
    const text = more ? Buffer.concat(more).toString('utf8') : (first?.toString('utf8') ?? '');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const key = req.headers['idempotency-key'];
    if (!shapeOk(body, key)) {
      res.writeHead(400).end();
      return;
    }
    waiting.push({
      key: key as string,
      hash: hash('sha256', text),
      items: body.items,
      answer: (row) => {
        // The workload has fresh keys on a sold-out SKU only: anything else is not this floor's to answer.
        if (row.r_outcome !== 'INSUFFICIENT_STOCK') {
          res.writeHead(500).end();
          return;
        }
        const problem = JSON.stringify({
          type: 'https://tcc-inventory.dev/problems/insufficient-stock',
          title: 'Conflict',
          status: 409,
          detail: `only ${row.r_available} of ${row.r_sku} available, ${row.r_requested} requested`,
          code: row.r_outcome,
          sku: row.r_sku,
          requested: row.r_requested,
          available: row.r_available,
        });
        res.writeHead(409, { 'x-request-id': requestId, 'content-type': 'application/problem+json; charset=utf-8', 'content-length': Buffer.byteLength(problem) });
        res.end(problem);
        logLine(`{"level":30,"time":${Date.now()},"reqId":"${requestId}","method":"POST","url":"/orders","status":409,"ms":${(performance.now() - started).toFixed(2)}}\n`);
      },
    });
    arrived();
  });
});
server.keepAliveTimeout = 75_000;
server.listen({ port: Number(process.env.BENCH_PORT ?? 0), host: '127.0.0.1', reusePort: true }, () => {
  process.stdout.write(`listening ${JSON.stringify(server.address())}\n`);
});
process.on('SIGTERM', () => server.close(() => void db.end().then(() => process.exit(0))));
