import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { PeriodicModule } from '../database/periodic.module.js';
import { InventoryModule } from '../inventory/inventory.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { OrdersModule } from '../orders/orders.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { InventoryConsistencyService } from './inventory-consistency.service.js';
import { ReconciliationService } from './reconciliation.service.js';
import { Retention } from './retention.js';
import { Sweeper } from './sweeper.js';

/**
 * The safety nets: reconciliation and the inventory consistency check (on demand through the operator API, scheduled on workers), and
 * on workers the sweeper and retention.
 */
@Module({})
export class RecoveryModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(RecoveryModule, config, () => ({
      imports: [MetricsModule, PaymentsModule, PeriodicModule, OrdersModule.forRole(config), InventoryModule.forRole(config)],
      providers: [ReconciliationService, InventoryConsistencyService, ...(config.runsWorkers ? [Sweeper, Retention] : [])],
      exports: [ReconciliationService, InventoryConsistencyService],
    }));
  }
}
