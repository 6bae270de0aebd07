/**
 * `npm run bench`: Try throughput on one hot SKU, end to end (HTTP → NestJS → one Postgres
 * transaction) against the same reservation done as raw SQL, on the local Postgres and Redis.
 * Prints a Markdown table; BENCHMARKS.md keeps the numbers with the command that made them.
 *
 * Env: BENCH_PG_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_REDIS_URL, BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 50).
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { AddressInfo, createServer } from 'node:net';
import pg from 'pg';
import { createSimulatorServer } from '../gateway-simulator/server.js';

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TOKEN = 'bench-admin-token';
const SELLOUT_STOCK = 1000;

function dbUrl(name: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function recreate(name: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function startService(databaseUrl: string, gatewayUrl: string): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['dist/main.js'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      PAYMENT_GATEWAY_URL: gatewayUrl,
      ADMIN_TOKEN: TOKEN,
      PORT: String(port),
      QUEUE_PREFIX: `bench-${randomUUID().slice(0, 8)}`,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      RESERVATION_TTL_MS: '3600000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`service exited with ${proc.exitCode}`);
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) return { url, stop: () => proc.kill('SIGTERM') };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('service did not become healthy');
}

async function put(url: string, sku: string, onHand: number): Promise<void> {
  const res = await fetch(`${url}/admin/inventory/${sku}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: sku, priceMinor: 1000, currency: 'USD', onHand }),
  });
  if (res.status !== 200) throw new Error(`seed ${sku}: ${res.status}`);
}

async function httpTry(url: string, sku: string, connections: number, run: { duration?: number; amount?: number }) {
  const body = JSON.stringify({ customerId: 'bench', items: [{ sku, quantity: 1 }] });
  return autocannon({
    url,
    connections,
    ...run,
    requests: [{ method: 'POST', path: '/orders', setupRequest: (req) => ({ ...req, headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body }) }],
  });
}

/** The same reservation as one conditional UPDATE per order, autocommit, from a pool of `connections`. */
async function rawSql(databaseUrl: string, sku: string, connections: number, seconds: number) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: connections });
  const latencies: number[] = [];
  let ok = 0;
  let refused = 0;
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) {
        const t = performance.now();
        const r = await pool.query(`UPDATE skus SET reserved = reserved + 1 WHERE sku = $1 AND on_hand - reserved >= 1`, [sku]);
        latencies.push(performance.now() - t);
        if (r.rowCount === 1) ok++;
        else refused++;
      }
    }),
  );
  await pool.end();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { perSec: (ok + refused) / seconds, ok, refused, p50: pct(50), p99: pct(99) };
}

async function main(): Promise<void> {
  const name = 'tcc_bench';
  await recreate(name);
  const sim = createSimulatorServer();
  await new Promise<void>((r) => sim.server.listen(0, '127.0.0.1', () => r()));
  const gateway = `http://127.0.0.1:${(sim.server.address() as AddressInfo).port}`;
  const svc = await startService(dbUrl(name), gateway);
  const check = new pg.Client({ connectionString: dbUrl(name) });
  await check.connect();
  try {
    await put(svc.url, 'HOT-1', 100_000_000);
    await httpTry(svc.url, 'HOT-1', 10, { duration: 2 }); // warm-up
    const http = await httpTry(svc.url, 'HOT-1', CONNECTIONS, { duration: SECONDS });

    // Sell-out: far more demand than stock; exactly the stock is reserved, nothing more.
    await put(svc.url, 'HOT-2', SELLOUT_STOCK);
    const sellout = await httpTry(svc.url, 'HOT-2', 200, { amount: SELLOUT_STOCK * 3 });
    const [{ reserved, on_hand }] = (await check.query(`SELECT reserved, on_hand FROM skus WHERE sku = 'HOT-2'`)).rows;

    await put(svc.url, 'HOT-3', 100_000_000);
    const raw = await rawSql(dbUrl(name), 'HOT-3', Math.min(CONNECTIONS, 20), SECONDS);

    const created = http.statusCodeStats['201']?.count ?? 0;
    console.log(`\n| scenario | conc. | throughput | p50 | p99 | notes |`);
    console.log(`|---|---|---|---|---|---|`);
    console.log(`| HTTP Try, 1 hot SKU | ${CONNECTIONS} | ${(created / SECONDS).toFixed(0)} orders/s | ${http.latency.p50} ms | ${http.latency.p99} ms | ${created} created, ${http.non2xx} non-2xx, ${http.errors} errors |`);
    console.log(`| HTTP Try, sell-out of ${SELLOUT_STOCK} (${SELLOUT_STOCK * 3} requests) | 200 | ${(sellout.requests.total / sellout.duration).toFixed(0)} answers/s | ${sellout.latency.p50} ms | ${sellout.latency.p99} ms | 201: ${sellout.statusCodeStats['201']?.count ?? 0}, 409: ${sellout.statusCodeStats['409']?.count ?? 0}; reserved ${reserved} of ${on_hand} |`);
    console.log(`| raw SQL conditional UPDATE, 1 hot SKU | ${Math.min(CONNECTIONS, 20)} | ${raw.perSec.toFixed(0)} updates/s | ${raw.p50.toFixed(1)} ms | ${raw.p99.toFixed(1)} ms | the floor: one row lock, no order, no idempotency key |`);
    if (reserved !== on_hand || (sellout.statusCodeStats['201']?.count ?? 0) !== Number(reserved)) {
      throw new Error(`oversell or lost reservation: reserved ${reserved}, on hand ${on_hand}`);
    }
  } finally {
    await check.end();
    svc.stop();
    await sim.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
