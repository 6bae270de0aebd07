import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AdminController } from './admin/admin.controller.js';
import { AdminService } from './admin/admin.service.js';
import { ReconciliationController } from './admin/reconciliation.controller.js';
import { AppConfig } from './config/app-config.js';
import { DatabaseModule } from './database/database.module.js';
import { InventoryController, ParticipantController } from './inventory/inventory.controller.js';
import { InventoryService } from './inventory/inventory.service.js';
import { JobScheduler } from './jobs/job-scheduler.js';
import { JobWorkers } from './jobs/job-workers.js';
import { MetricsService } from './metrics/metrics.service.js';
import { HealthController } from './ops/health.controller.js';
import { HealthService } from './ops/health.service.js';
import { MetricsController, MetricsScraper } from './ops/metrics.controller.js';
import { OpsServer } from './ops/ops-server.js';
import { CheckoutService } from './orders/checkout.service.js';
import { ConfirmService } from './orders/confirm.service.js';
import { DueOrders } from './orders/due-orders.js';
import { OrderScheduler } from './orders/order-scheduler.js';
import { OrderStore } from './orders/order-store.js';
import { OrdersController } from './orders/orders.controller.js';
import { RefundService } from './orders/refund.service.js';
import { TryEngine } from './orders/try-engine.js';
import { PaymentGateway } from './payments/payment-gateway.js';
import { PeriodicJobs } from './recovery/periodic.js';
import { ReconciliationService } from './recovery/reconciliation.service.js';
import { Sweeper } from './recovery/sweeper.js';
import { WebhookDelivery } from './webhooks/webhook-delivery.js';
import { WebhookPoller } from './webhooks/webhook-poller.js';
import { WebhooksController } from './webhooks/webhooks.controller.js';
import { WebhooksService } from './webhooks/webhooks.service.js';

/** Controllers served on the public port by ROLE api / all. */
export const HTTP_CONTROLLERS: Type[] = [
  OrdersController,
  InventoryController,
  ParticipantController,
  AdminController,
  ReconciliationController,
  HealthController,
  MetricsController,
  WebhooksController,
];

/** ROLE decides what runs: HTTP controllers (api, all), job workers and periodic jobs (worker, all). */
@Module({})
export class AppModule {
  static register(config: AppConfig): DynamicModule {
    const core: Provider[] = [
      { provide: AppConfig, useValue: config },
      MetricsService,
      PaymentGateway,
      InventoryService,
      OrderStore,
      TryEngine,
      CheckoutService,
      ConfirmService,
      RefundService,
      DueOrders,
      AdminService,
      PeriodicJobs,
      ReconciliationService,
      JobScheduler,
      { provide: OrderScheduler, useExisting: JobScheduler },
      HealthService,
      MetricsScraper,
      OpsServer,
      WebhooksService,
    ];
    const workers: Provider[] = config.runsWorkers ? [JobWorkers, Sweeper, WebhookDelivery, WebhookPoller] : [];
    return {
      module: AppModule,
      global: true,
      imports: [DatabaseModule, ScheduleModule.forRoot()],
      controllers: config.runsHttp ? HTTP_CONTROLLERS : [],
      providers: [...core, ...workers],
      exports: [AppConfig],
    };
  }
}
