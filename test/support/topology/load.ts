import { randomUUID } from 'node:crypto';
import { client } from '../http.js';

/**
 * A checkout load for the topology spec, over HTTP against one address (the api processes share
 * it through HTTP_REUSE_PORT): shoppers Try baskets of the given SKUs and Confirm, Cancel or
 * abandon them, sending some of every call twice (the same Idempotency-Key and body, at once or
 * again later, as a client retrying after a timeout would); readers walk the read routes. Every
 * answer's status is counted; an answer that breaks the contract on the spot is kept in `broken`.
 */
export interface LoadResult {
  statuses: Record<number, number>;
  /** Read routes' statuses, apart (they must answer even while the replica is away). */
  readStatuses: Record<number, number>;
  orders: Set<string>;
  /** Trys and Confirms sent twice whose answers agreed (one order per key, the same outcome). */
  replays: number;
  broken: unknown[];
}

export interface LoadOptions {
  url: string;
  skus: string[];
  until: number;
  shoppers: number;
  readers: number;
  /** Seeded randomness (test/support/rng.ts). */
  random: () => number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function checkoutLoad(o: LoadOptions): Promise<LoadResult> {
  const api = client(o.url);
  const r: LoadResult = { statuses: {}, readStatuses: {}, orders: new Set(), replays: 0, broken: [] };
  const pick = <T>(xs: T[]): T => xs[Math.floor(o.random() * xs.length)];
  const count = (into: Record<number, number>, status: number) => (into[status] = (into[status] ?? 0) + 1);

  async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, admin = false) {
    try {
      const res = await api.send(method, path, { body, headers, admin });
      count(r.statuses, res.status);
      return res;
    } catch (err) {
      r.broken.push({ path, transport: String(err) }); // a dropped connection: the api processes never go away here
      return undefined;
    }
  }

  /** A Try sent until it is answered with something but 503 (a client retries that, with the same key). */
  async function tryOrder(key: string, body: unknown) {
    for (let i = 0; i < 20; i++) {
      const res = await send('POST', '/orders', body, { 'idempotency-key': key });
      if (res && res.status !== 503 && !(res.status === 409 && res.body?.code === 'IDEMPOTENCY_IN_PROGRESS')) return res;
      await sleep(100);
    }
    return undefined;
  }

  async function shopper(): Promise<void> {
    while (Date.now() < o.until) {
      const key = randomUUID();
      const skus = [...new Set([pick(o.skus), ...(o.random() < 0.4 ? [pick(o.skus)] : [])])];
      const body = { customerId: `topo-${Math.floor(o.random() * 50)}`, items: skus.map((sku) => ({ sku, quantity: 1 + Math.floor(o.random() * 2) })) };
      const twice = o.random() < 0.25;
      const answers = await Promise.all([tryOrder(key, body), ...(twice ? [tryOrder(key, body)] : [])]);
      const made = answers.filter((a) => a && (a.status === 201 || a.status === 200));
      if (!made.length) continue;
      const id = made[0]!.body.id as string;
      r.orders.add(id);
      if (twice) {
        if (made.length === 2 && made[1]!.body.id !== id) r.broken.push({ twoOrdersForKey: key, first: made[0]!.body, second: made[1]!.body });
        else if (made.length === 2) r.replays += 1;
        else {
          // One order, one refusal: each answered its own moment — a refused Try holds nothing and
          // does not use up its key, so the other, told IN_PROGRESS meanwhile, could still make the
          // order after a release. Then the key must stand for that order from now on.
          const refusal = answers.find((a) => !made.includes(a));
          const again = await tryOrder(key, body);
          if (!refusal || refusal.status !== 409 || refusal.body?.code !== 'INSUFFICIENT_STOCK' || again?.status !== 200 || again.body?.id !== id) {
            r.broken.push({ replayedTry: key, order: made[0]!.body, refusal: refusal?.body ?? refusal?.status, again: again?.body });
          } else r.replays += 1;
        }
      }
      const roll = o.random();
      if (roll < 0.1) await send('POST', `/orders/${id}/cancel`);
      else if (roll < 0.8) {
        const confirm = () => send('POST', `/orders/${id}/confirm`, o.random() < 0.05 ? { paymentToken: 'tok_decline' } : {});
        if (o.random() < 0.2) {
          const [a, b] = await Promise.all([confirm(), confirm()]);
          // At once, one may be answered while the other still runs; answered alike, they say the same.
          const same = (x: { id?: string; code?: string }, y: { id?: string; code?: string }) => (x?.id ?? x?.code) === (y?.id ?? y?.code);
          if (a && b && a.status < 500 && b.status < 500) {
            if (a.status !== b.status || same(a.body, b.body)) r.replays += 1;
            else r.broken.push({ replayedConfirm: id, a: a.body, b: b.body });
          }
        } else await confirm();
      } // else: abandoned; its reservation expires
    }
  }

  async function reader(): Promise<void> {
    const routes = () => [
      `/inventory/${pick(o.skus)}`,
      '/admin/inventory?limit=20',
      `/admin/inventory/${pick(o.skus)}/movements?limit=20`,
      '/admin/orders?limit=20&sort=newest',
      '/admin/orders/counts',
      '/admin/locations',
      '/admin/stats',
      '/metrics',
    ];
    while (Date.now() < o.until) {
      const path = pick(routes());
      try {
        const res = await api.send('GET', path, { admin: path.startsWith('/admin') });
        count(r.readStatuses, res.status);
        if (res.status !== 200 && res.status !== 503) r.broken.push({ read: path, status: res.status, body: res.body });
      } catch (err) {
        r.broken.push({ read: path, transport: String(err) });
      }
      await sleep(20);
    }
  }

  await Promise.all([...Array.from({ length: o.shoppers }, shopper), ...Array.from({ length: o.readers }, reader)]);
  return r;
}
