import { randomUUID } from 'node:crypto';
import { TERMINAL } from '../../src/orders/state/order-state.js';
import { moveJson, releaseMove } from '../../src/orders/state/moves.js';
import { REFUND } from '../../src/orders/state/refund-state.js';
import { waitingOnLock } from '../support/database.js';
import { useSessions } from '../support/medium.js';

/**
 * An order's `updatedAt` orders its events (API.md, "Webhooks": "its `updatedAt` orders the
 * events"), however the transactions that change it interleave. A batch of moves locks its orders
 * in id order; one that started first can reach an order after a later transaction changed it and
 * committed. Stamped with its statement's start, its change then read as older than the one before
 * it: a receiver ordering by `updatedAt` took the order for flagged-and-holding when it was CANCELED.
 */
const sessions = useSessions(3);

async function holdingOrder(): Promise<string> {
  const id = randomUUID();
  await sessions.db.query(
    `INSERT INTO orders (id, transaction_id, customer_id, status, amount_minor, currency, reservation_expires_at, payment_key, items, idempotency_key, request_hash)
     VALUES ($1::uuid, 'tcc-' || $1::text, 'upd', 'TRY_SUCCESS', 500, 'USD', now() + interval '1 hour', 'charge-' || $1::text, '[]', 'key-' || $1::text, 'h')`,
    [id],
  );
  return id;
}

const updatedAt = async (id: string) => (await sessions.db.query<{ at: string }>(`SELECT updated_at::text AS at FROM orders WHERE id = $1`, [id]))[0].at;
/** Whether the order's updated_at (and the updatedAt of its JSON, the events' copy) is later than `at`. */
const laterThan = async (id: string, at: string) =>
  (await sessions.db.query<{ later: boolean; json_later: boolean }>(
    `SELECT o.updated_at > $2::timestamptz AS later, (tcc_order_json(o)->>'updatedAt')::timestamptz >= date_trunc('milliseconds', $2::timestamptz) AS json_later FROM orders o WHERE o.id = $1`,
    [id, at],
  ))[0];

it("a batch that started first and reached the order last stamps it later than the change it came after", async () => {
  const [holder, batch, flagger] = sessions.clients;
  const [a, c] = [await holdingOrder(), await holdingOrder()].sort();
  const batchPid = (await batch.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;

  // The first of the batch's orders is held, so the batch waits there, before it reaches the second.
  await holder.query('BEGIN');
  await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [a]);
  const moves = [a, c].map((id) => moveJson(releaseMove(id, 'CANCELED', 'canceled by the customer', { refundWatchMs: undefined })));
  const released = batch.query(`SELECT r_id, r_won FROM tcc_apply($1::jsonb, $2::text[], $3::text)`, [JSON.stringify(moves), TERMINAL, REFUND.pending]);
  await waitingOnLock(sessions.db, batchPid);

  // Meanwhile another transaction, begun after the batch, changes the second order and commits.
  await new Promise((r) => setTimeout(r, 20));
  await flagger.query(`SELECT tcc_flag_attention($1::uuid, 'reconciliation_mismatch', '{}'::jsonb)`, [c]);
  const flaggedAt = await updatedAt(c);

  await holder.query('COMMIT');
  expect((await released).rows.map((r) => r.r_won)).toEqual([true, true]);
  expect(await laterThan(c, flaggedAt)).toEqual({ later: true, json_later: true });
});
