import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { InventoryModule } from '../inventory/inventory.module.js';
import { OrdersModule } from '../orders/orders.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { JobWorkers } from './job-workers.js';
import { SchedulingModule } from './scheduling.module.js';

/** The BullMQ workers (ROLE worker, all): one per queue, each with its one handler. */
@Module({})
export class JobsModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(JobsModule, config, () => ({
      imports: [SchedulingModule, OrdersModule.forRole(config), InventoryModule.forRole(config), WebhooksModule.forRole(config)],
      providers: config.runsWorkers ? [JobWorkers] : [],
    }));
  }
}
