import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { XACT_LOCK_SPACES } from '../../src/database/session-lock.js';
import type { Client } from './http.js';
import { waitFor } from './http.js';

export const TERMINAL = ['CONFIRM_SUCCESS', 'PAY_FAILED', 'CANCELED'];

export const uniqueSku = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;

/** Seeds a SKU and reserves `quantity` of it; returns the order JSON. */
export async function reserve(api: Client, sku: string, quantity = 1, onHand = 10, priceMinor = 1000): Promise<any> {
  const put = await api.putSku(sku, onHand, priceMinor);
  if (put.status !== 200) throw new Error(`PUT sku -> ${put.status} ${JSON.stringify(put.body)}`);
  const res = await api.order(randomUUID(), { customerId: 'c', items: [{ sku, quantity }] });
  if (res.status !== 201) throw new Error(`Try -> ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function waitForStatus(api: Client, id: string, statuses: string[], timeoutMs = 20_000): Promise<any> {
  return waitFor(
    `order ${id} to reach ${statuses.join('|')}`,
    async () => {
      const res = await api.get(`/orders/${id}`);
      return statuses.includes(res.body?.status) ? res.body : undefined;
    },
    timeoutMs,
  );
}

/**
 * Holds an Idempotency-Key the way tcc_try_batch does while its batch runs: an open transaction
 * holding the key's advisory lock (XACT_LOCK_SPACES.idempotencyKey, as the engine takes it). `end` commits or rolls back
 * that transaction and closes the connection.
 */
export async function holdKey(dbUrl: string, key: string): Promise<{ end(how: 'COMMIT' | 'ROLLBACK'): Promise<void> }> {
  const holder = new pg.Client({ connectionString: dbUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [XACT_LOCK_SPACES.idempotencyKey.space, key]);
  return {
    end: async (how) => {
      try {
        await holder.query(how);
      } finally {
        await holder.end();
      }
    },
  };
}
