import { DynamicModule, Module } from '@nestjs/common';
import { AccessModule } from './access/access.module.js';
import { AdminModule } from './admin/admin.module.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConsoleModule } from './console/console.module.js';
import { DatabaseModule } from './database/database.module.js';
import { InventoryModule } from './inventory/inventory.module.js';
import { JobsModule } from './jobs/jobs.module.js';
import { SchedulingModule } from './jobs/scheduling.module.js';
import { OpsModule } from './ops/ops.module.js';
import { OrdersModule } from './orders/orders.module.js';
import { RecoveryModule } from './recovery/recovery.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/**
 * The service for one ROLE: every domain module takes the configuration and decides its own
 * role-dependent parts — controllers when the process serves HTTP (api, all), job workers and
 * periodic work when it runs workers (worker, all). Each module lists what it imports itself; one
 * imported from several places is built once per configuration (config/role-module.ts). Global
 * are only the configuration, the pool and the scheduler behind the ports (see each module).
 */
@Module({})
export class AppModule {
  static forRole(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        SchedulingModule,
        InventoryModule.forRole(config),
        OrdersModule.forRole(config),
        WebhooksModule.forRole(config),
        JobsModule.forRole(config),
        RecoveryModule.forRole(config),
        AccessModule.forRole(config),
        AdminModule.forRole(config),
        ConsoleModule.forRole(config),
        OpsModule.forRole(config),
      ],
    };
  }
}
