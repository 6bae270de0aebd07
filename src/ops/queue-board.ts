import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Router } from 'express';
import type { JobScheduler } from '../jobs/job-scheduler.js';

/** bull-board at /admin/queues; main.ts mounts it behind the admin bearer check like every /admin route. */
export function queueBoard(jobs: JobScheduler, basePath = '/admin/queues'): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({ queues: Object.values(jobs.queues).map((q) => new BullMQAdapter(q)), serverAdapter });
  return serverAdapter.getRouter() as Router;
}
