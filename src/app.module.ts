import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from './config/app-config.js';
import { DatabaseModule } from './database/database.module.js';
import { InventoryController, ParticipantController } from './inventory/inventory.controller.js';
import { InventoryService } from './inventory/inventory.service.js';
import { JobScheduler } from './jobs/job-scheduler.js';
import { JobWorkers } from './jobs/job-workers.js';
import { MetricsController } from './ops/metrics.controller.js';
import { HealthController } from './ops/health.controller.js';
import { MetricsService } from './ops/metrics.service.js';
import { CheckoutService } from './orders/checkout.service.js';
import { ConfirmService } from './orders/confirm.service.js';
import { OrderLifecycle } from './orders/order-lifecycle.js';
import { OrderScheduler } from './orders/order-scheduler.js';
import { OrdersController } from './orders/orders.controller.js';
import { OrdersRepository } from './orders/orders.repository.js';
import { RefundService } from './orders/refund.service.js';
import { PaymentGateway } from './payments/payment-gateway.js';
import { Sweeper } from './recovery/sweeper.js';
import { AdminController } from './admin/admin.controller.js';
import { AdminService } from './admin/admin.service.js';
import { ReconciliationController } from './admin/reconciliation.controller.js';
import { ReconciliationService } from './recovery/reconciliation.service.js';
import { loggerOptions } from './ops/logging.js';

/** ROLE decides what runs: HTTP controllers (api, all), job workers and the sweeper (worker, all). */
@Module({})
export class AppModule {
  static register(config: AppConfig): DynamicModule {
    const core: Provider[] = [
      { provide: AppConfig, useValue: config },
      MetricsService,
      PaymentGateway,
      InventoryService,
      OrdersRepository,
      OrderLifecycle,
      CheckoutService,
      ConfirmService,
      RefundService,
      AdminService,
      ReconciliationService,
      JobScheduler,
      { provide: OrderScheduler, useExisting: JobScheduler },
    ];
    const controllers: Type[] = config.runsHttp
      ? [OrdersController, InventoryController, ParticipantController, AdminController, ReconciliationController, HealthController, MetricsController]
      : [];
    const workers: Provider[] = config.runsWorkers ? [JobWorkers, Sweeper] : [];
    return {
      module: AppModule,
      global: true,
      imports: [
        LoggerModule.forRoot(loggerOptions(config)),
        DatabaseModule,
        TerminusModule.forRoot({ logger: false }),
        ...(config.runsWorkers ? [ScheduleModule.forRoot()] : []),
      ],
      controllers,
      providers: [...core, ...workers],
      exports: [AppConfig],
    };
  }
}
