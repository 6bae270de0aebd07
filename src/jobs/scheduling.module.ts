import { Global, Module } from '@nestjs/common';
import { BranchScheduler } from '../inventory/participant/branch-scheduler.js';
import { OrderScheduler } from '../orders/order-scheduler.js';
import { WebhookScheduler } from '../webhooks/webhook-scheduler.js';
import { JobScheduler } from './job-scheduler.js';
import { RedisFailures } from './redis-failures.js';

/**
 * BullMQ's producer (JobScheduler) behind the scheduler ports that orders/, inventory/ and
 * webhooks/ declare. Global, and only for that: a lower layer may not import the module that
 * implements its port, so the port is resolved the way Db and AppConfig are. Modules above jobs/
 * import it by name. It also holds what the workers' Redis commands go through (RedisFailures),
 * one per process, which health reads.
 */
@Global()
@Module({
  providers: [
    JobScheduler,
    RedisFailures,
    { provide: OrderScheduler, useExisting: JobScheduler },
    { provide: BranchScheduler, useExisting: JobScheduler },
    { provide: WebhookScheduler, useExisting: JobScheduler },
  ],
  exports: [JobScheduler, RedisFailures, OrderScheduler, BranchScheduler, WebhookScheduler],
})
export class SchedulingModule {}
