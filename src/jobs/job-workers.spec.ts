import { UnrecoverableError } from 'bullmq';
import { AppError } from '../common/errors.js';
import type { AppConfig } from '../config/app-config.js';
import type { ParticipantService } from '../inventory/participant/participant.service.js';
import type { RefundService } from '../orders/cancel/refund.service.js';
import type { DueOrders } from '../orders/due-orders.js';
import type { WebhookDelivery } from '../webhooks/webhook-delivery.js';
import type { JobScheduler } from './job-scheduler.js';
import { DELIVERY_TIMEOUT_MS } from '../webhooks/webhook-sender.js';
import { JobWorkers, lockOf, processorFor } from './job-workers.js';
import { QUEUES } from './queues.js';
import { RedisFailures } from './redis-failures.js';

/** The workers' collaborators, faked: each records what it is asked; the database clock says a bucket's orders are due in `notYetDueIn`. */
function workers(notYetDueIn?: number) {
  const calls: unknown[] = [];
  const due = {
    drive: async (graceMs: number) => void calls.push(['drive', graceMs]),
    notYetDueIn: async (bucket: number) => {
      calls.push(['notYetDueIn', bucket]);
      return notYetDueIn;
    },
  } as unknown as DueOrders;
  const refunds = { process: async (id: string) => void calls.push(['refund', id]) } as unknown as RefundService;
  const scheduler = { followUp: async (...args: unknown[]) => void calls.push(['followUp', ...args]) } as unknown as JobScheduler;
  const participant = { expireDue: async () => void calls.push(['expireBranches']) } as unknown as ParticipantService;
  const webhooks = { attempt: async (ref: unknown) => void calls.push(['webhook', ref]) } as unknown as WebhookDelivery;
  const handlers = new JobWorkers({ env: {} } as AppConfig, due, refunds, scheduler, participant, webhooks, new RedisFailures()).handlers();
  return { handlers, calls };
}

describe('JobWorkers.handlers', () => {
  it('has exactly one handler per queue', () => {
    expect(Object.keys(workers().handlers).sort()).toEqual(Object.values(QUEUES).sort());
  });

  it('a retry bucket drives every due order; an expiry bucket also cancels outside branches past their deadline', async () => {
    const retry = workers();
    await retry.handlers[QUEUES.confirmRetry]({ bucket: 5000 });
    expect(retry.calls).toEqual([['drive', 0], ['notYetDueIn', 5000]]);
    const expiry = workers();
    await expiry.handlers[QUEUES.reservationExpiry]({ bucket: 5000 });
    expect(expiry.calls).toEqual([['drive', 0], ['expireBranches'], ['notYetDueIn', 5000]]);
  });

  it('looks at a bucket again when the database clock does not see all of it due yet', async () => {
    const w = workers(250);
    await w.handlers[QUEUES.reservationExpiry]({ bucket: 5000 });
    expect(w.calls.at(-1)).toEqual(['followUp', QUEUES.reservationExpiry, 5000, 250]);
    const noBucket = workers(250);
    await noBucket.handlers[QUEUES.confirmRetry]({});
    expect(noBucket.calls).toEqual([['drive', 0]]);
  });

  it('a refund or webhook job without what it names fails for good; with it, the one round or attempt runs', async () => {
    const w = workers();
    await expect(w.handlers[QUEUES.refunds]({})).rejects.toBeInstanceOf(UnrecoverableError);
    await expect(w.handlers[QUEUES.webhooks]({ webhook: 'crm', deliveryId: 'd-1' })).rejects.toBeInstanceOf(UnrecoverableError);
    await w.handlers[QUEUES.refunds]({ orderId: 'o-1' });
    await w.handlers[QUEUES.webhooks]({ webhook: 'crm', deliveryId: 'd-1', attempt: 0 });
    expect(w.calls).toEqual([['refund', 'o-1'], ['webhook', { webhook: 'crm', deliveryId: 'd-1', attempt: 0 }]]);
  });
});

describe('processorFor', () => {
  const job = (name: string) => ({ name, data: {} });

  it('runs the queue’s handler for the queue’s job name, and refuses any other name for good', async () => {
    let ran = 0;
    const processor = processorFor(QUEUES.refunds, async () => void (ran += 1));
    await processor(job(QUEUES.refunds));
    await expect(processor(job('something-else'))).rejects.toBeInstanceOf(UnrecoverableError);
    expect(ran).toBe(1);
  });

  it('a contract error will not heal by retrying: it fails the job for good, naming its code', async () => {
    const processor = processorFor(QUEUES.refunds, async () => {
      throw new AppError('ORDER_CONFIRMED', 'order o-1 is confirmed');
    });
    const err = await processor(job(QUEUES.refunds)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect((err as Error).message).toBe('ORDER_CONFIRMED: order o-1 is confirmed');
  });

  it.each([
    ['SERVICE_UNAVAILABLE (the database is away)', new AppError('SERVICE_UNAVAILABLE', 'the database cannot be reached')],
    ['any other error', new Error('connection reset')],
  ])('%s is thrown as it is, so BullMQ retries the job', async (_what, thrown) => {
    const processor = processorFor(QUEUES.refunds, async () => {
      throw thrown;
    });
    await expect(processor(job(QUEUES.refunds))).rejects.toBe(thrown);
  });
});

describe('lockOf', () => {
  it('outlives a payment call on the order queues, and a webhook attempt on its own queue, found stalled sooner there', () => {
    for (const queue of [QUEUES.confirmRetry, QUEUES.reservationExpiry, QUEUES.refunds]) {
      expect(lockOf(queue, 8000, DELIVERY_TIMEOUT_MS)).toEqual({ lockDuration: 32_000, stalledInterval: 15_000 });
      expect(lockOf(queue, 1000, DELIVERY_TIMEOUT_MS).lockDuration).toBe(30_000);
    }
    const webhooks = lockOf(QUEUES.webhooks, 8000, DELIVERY_TIMEOUT_MS);
    // Renewed at half its length: a whole attempt (its request timeout) fits in each half.
    expect(webhooks.lockDuration / 2).toBeGreaterThan(DELIVERY_TIMEOUT_MS);
    // Sent again within the lock and two stalled checks of being killed.
    expect(webhooks.lockDuration + 2 * webhooks.stalledInterval).toBeLessThanOrEqual(25_000);
    // A shorter attempt timeout (WEBHOOK_DELIVERY_TIMEOUT_MS) shortens both alike.
    expect(lockOf(QUEUES.webhooks, 8000, 2000)).toEqual({ lockDuration: 6000, stalledInterval: 2000 });
  });
});
