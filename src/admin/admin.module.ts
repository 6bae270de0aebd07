import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { InventoryModule } from '../inventory/inventory.module.js';
import { OrdersModule } from '../orders/orders.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { RecoveryModule } from '../recovery/recovery.module.js';
import { AdminController } from './admin.controller.js';
import { AdminService } from './admin.service.js';
import { InventoryConsistencyController } from './inventory-consistency.controller.js';
import { LocationUsageController, LocationUsageReader } from './location-usage.controller.js';
import { ParticipantAdminController } from './participant-admin.controller.js';
import { ReconciliationController } from './reconciliation.controller.js';

/** The operator API: orders (force actions, retries, timelines), outside branches, reconciliation, the inventory's consistency. */
@Module({})
export class AdminModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(AdminModule, config, () => ({
      imports: [OrdersModule.forRole(config), InventoryModule.forRole(config), RecoveryModule.forRole(config), PaymentsModule],
      controllers: config.runsHttp ? [AdminController, ReconciliationController, ParticipantAdminController, InventoryConsistencyController, LocationUsageController] : [],
      providers: [AdminService, LocationUsageReader],
    }));
  }
}
