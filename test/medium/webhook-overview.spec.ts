import { randomUUID } from 'node:crypto';
import type { DeliveryStatus } from '../../src/webhooks/delivery-state.js';
import { WEBHOOKS_SQL } from '../../src/webhooks/webhooks.sql.js';
import { Query, useRolledBack } from '../support/medium.js';

/**
 * The webhooks overview (API.md, the console: "each endpoint shows at a glance its deliveries of
 * the last hour (delivered, failed)") judges a delivery by the outcome of its latest attempt. A
 * delivered one sent again by its retry route is pending until that attempt ends, and its latest
 * attempt so far was delivered: it counts as delivered, not failed. One whose latest attempt failed
 * counts as failed, waiting for its next attempt or finally failed.
 */
const r = useRolledBack();
const [PENDING, DELIVERED, FAILED]: DeliveryStatus[] = ['pending', 'delivered', 'failed'];

async function delivery(q: Query, hook: string): Promise<string> {
  const id = randomUUID();
  await q(`INSERT INTO webhook_deliveries (id, webhook_name, type, payload, next_attempt_at) VALUES ($1, $2, 'order.confirmed', '{}', now())`, [id, hook]);
  return id;
}

const overview = async (q: Query, hook: string) => {
  const row = (await q<{ name: string; delivered: number; failed: number; failed_now: number }>(WEBHOOKS_SQL.overview.text, [FAILED, DELIVERED, PENDING])).find(
    (o) => o.name === hook,
  )!;
  return { delivered: row.delivered, failed: row.failed, failedNow: row.failed_now };
};
const delivered = (q: Query, hook: string, id: string, attempts: number) => q(WEBHOOKS_SQL.delivered.text, [hook, id, attempts, DELIVERED, PENDING]);
const failedAttempt = (q: Query, hook: string, id: string, attempts: number) =>
  q(WEBHOOKS_SQL.attemptFailed.text, [hook, id, attempts, 3, 1000, PENDING, FAILED, 'HTTP 500', 500, 'down']);
const resend = (q: Query, hook: string, id: string) => q(WEBHOOKS_SQL.retry.text, [hook, id, PENDING]);

it('a delivered delivery sent again counts as delivered while its new attempt is on its way; one whose latest attempt failed, as failed', async () => {
  await r.tx(async (q) => {
    const hook = `overview-${randomUUID().slice(0, 8)}`;
    await q(`INSERT INTO webhooks (name, url, events, secret) VALUES ($1, 'http://127.0.0.1:9/hook', '{order.confirmed}', 'whsec_x')`, [hook]);

    // Failed once, then delivered; then sent again by an operator.
    const a = await delivery(q, hook);
    await failedAttempt(q, hook, a, 0);
    await delivered(q, hook, a, 1);
    expect(await overview(q, hook)).toEqual({ delivered: 1, failed: 0, failedNow: 0 });
    expect(await resend(q, hook, a)).toHaveLength(1);
    expect(await overview(q, hook)).toEqual({ delivered: 1, failed: 0, failedNow: 0 });
    // Its new attempt fails: now it counts as failed (pending, its latest attempt failed).
    await failedAttempt(q, hook, a, 2);
    expect(await overview(q, hook)).toEqual({ delivered: 0, failed: 1, failedNow: 1 });

    // A failed attempt waiting for the next one counts as failed; one never attempted, as neither.
    const b = await delivery(q, hook);
    await failedAttempt(q, hook, b, 0);
    await delivery(q, hook);
    expect(await overview(q, hook)).toEqual({ delivered: 0, failed: 2, failedNow: 1 });

    // "Resend failed": a fresh round, no attempt made in it yet: neither delivered nor failed.
    await q(WEBHOOKS_SQL.retryFailed.text, [hook, FAILED, PENDING]);
    expect(await overview(q, hook)).toEqual({ delivered: 0, failed: 1, failedNow: 0 });

    // A failed one sent again by its own route: its latest attempt failed, so it still counts as
    // failed while the new one is on its way (no longer failed now).
    const c = await delivery(q, hook);
    for (const made of [0, 1, 2]) await failedAttempt(q, hook, c, made);
    expect(await overview(q, hook)).toEqual({ delivered: 0, failed: 2, failedNow: 1 });
    expect(await resend(q, hook, c)).toHaveLength(1);
    expect(await overview(q, hook)).toEqual({ delivered: 0, failed: 2, failedNow: 0 });
  });
});
