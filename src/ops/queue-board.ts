import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import { toProblem } from '../common/errors.js';
import type { JobScheduler } from '../jobs/job-scheduler.js';

/**
 * bull-board at /admin/queues, behind the admin check like every /admin route (main.ts). When
 * Redis is away its API answers 503 problem+json, not a bare 500.
 */
export async function registerQueueBoard(app: FastifyInstance, jobs: JobScheduler, basePath = '/admin/queues'): Promise<void> {
  const adapter = new FastifyAdapter();
  adapter.setBasePath(basePath);
  createBullBoard({ queues: Object.values(jobs.queues).map((q) => new BullMQAdapter(q)), serverAdapter: adapter });
  adapter.setErrorHandler((err: Error & { statusCode?: number }) =>
    err.statusCode && err.statusCode < 500
      ? { status: err.statusCode as 400, body: toProblem('NOT_FOUND', err.message) }
      : { status: 503 as 500, body: toProblem('SERVICE_UNAVAILABLE', 'the queue dashboard cannot reach Redis') },
  );
  await app.register(
    async (scope) => {
      scope.addHook('onSend', async (_req, reply, payload) => {
        if (reply.statusCode >= 400) reply.type('application/problem+json');
        return payload;
      });
      await scope.register(adapter.registerPlugin());
    },
    { prefix: basePath },
  );
}
