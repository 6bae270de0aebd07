import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { parseEnv } from '../config/env.schema.js';
import { JobScheduler } from './job-scheduler.js';

describe('JobScheduler with Redis away', () => {
  it('never rejects a port call, and logs what it could not enqueue once per queue with a count, not once per order', async () => {
    // Nothing listens on port 1: every enqueue waits out its timeout and fails.
    const scheduler = new JobScheduler(new AppConfig(parseEnv({ REDIS_URL: 'redis://127.0.0.1:1', SCHEDULE_BUCKET_MS: '1000' })));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const at = Date.now() + 60_000;
      await expect(Promise.all([
        ...Array.from({ length: 5 }, (_, i) => scheduler.expiryDue(new Date(at + i * 1000))),
        scheduler.stepDue(new Date(at)),
        scheduler.refundOwed('00000000-0000-4000-8000-000000000001'),
        scheduler.refundOwed('00000000-0000-4000-8000-000000000002'),
        scheduler.timeoutDue(new Date(at + 10_000)),
      ])).resolves.toBeDefined();
      const lines = warn.mock.calls.filter(([, msg]) => msg === 'jobs not enqueued; the sweeper will pick the work up').map(([fields]) => fields as { queue: string; failures: number });
      // The first failure of each queue is written at once; the rest wait for the next line (or shutdown).
      expect(lines.map((l) => [l.queue, l.failures]).sort()).toEqual([['confirm-retry', 1], ['refunds', 1], ['reservation-expiry', 1]]);
      await scheduler.onApplicationShutdown();
      const all = warn.mock.calls.filter(([, msg]) => msg === 'jobs not enqueued; the sweeper will pick the work up').map(([fields]) => fields as { queue: string; failures: number });
      expect(all.filter((l) => l.queue === 'reservation-expiry').reduce((n, l) => n + l.failures, 0)).toBe(6);
      expect(all.filter((l) => l.queue === 'refunds').reduce((n, l) => n + l.failures, 0)).toBe(2);
      expect(all).toHaveLength(5);
    } finally {
      warn.mockRestore();
      await scheduler.onApplicationShutdown();
    }
  }, 20_000);
});
