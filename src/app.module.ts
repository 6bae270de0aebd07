import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AdminController } from './admin/admin.controller.js';
import { AdminService } from './admin/admin.service.js';
import { ParticipantAdminController } from './admin/participant-admin.controller.js';
import { ReconciliationController } from './admin/reconciliation.controller.js';
import { AppConfig } from './config/app-config.js';
import { ConsoleSessionController } from './console/console-session.controller.js';
import { ConsoleSessions } from './console/console-sessions.js';
import { ConsoleStats, ConsoleStatsController } from './console/console-stats.js';
import { DatabaseModule } from './database/database.module.js';
import { InventoryController } from './inventory/inventory.controller.js';
import { BranchScheduler } from './inventory/participant/branch-scheduler.js';
import { ParticipantController } from './inventory/participant/participant.controller.js';
import { InventoryService } from './inventory/inventory.service.js';
import { ParticipantService } from './inventory/participant/participant.service.js';
import { JobScheduler } from './jobs/job-scheduler.js';
import { JobWorkers } from './jobs/job-workers.js';
import { MetricsService } from './metrics/metrics.service.js';
import { HealthController } from './ops/health.controller.js';
import { HealthService } from './ops/health.service.js';
import { MetricsController, MetricsScraper } from './ops/metrics.controller.js';
import { OpsServer } from './ops/ops-server.js';
import { CancelService } from './orders/cancel/cancel.service.js';
import { RefundService } from './orders/cancel/refund.service.js';
import { ReservationExpiry } from './orders/cancel/reservation-expiry.js';
import { ConfirmClaims } from './orders/confirm/claims.js';
import { ConfirmService } from './orders/confirm/confirm.service.js';
import { DueOrders } from './orders/due-orders.js';
import { OrderAnswers } from './orders/order-answers.js';
import { OrderScheduler } from './orders/order-scheduler.js';
import { OrdersController } from './orders/orders.controller.js';
import { OrderStore } from './orders/state/order-store.js';
import { TryEngine } from './orders/try/try-engine.js';
import { PaymentGateway } from './payments/payment-gateway.js';
import { PeriodicJobs } from './database/periodic.js';
import { ReconciliationService } from './recovery/reconciliation.service.js';
import { Retention } from './recovery/retention.js';
import { Sweeper } from './recovery/sweeper.js';
import { WebhookDelivery } from './webhooks/webhook-delivery.js';
import { WebhookPoller } from './webhooks/webhook-poller.js';
import { WebhookScheduler } from './webhooks/webhook-scheduler.js';
import { WebhooksController } from './webhooks/webhooks.controller.js';
import { WebhooksService } from './webhooks/webhooks.service.js';

/** Controllers served on the public port by ROLE api / all. */
export const HTTP_CONTROLLERS: Type[] = [
  OrdersController,
  InventoryController,
  ParticipantController,
  AdminController,
  ReconciliationController,
  ParticipantAdminController,
  HealthController,
  MetricsController,
  ConsoleSessionController,
  ConsoleStatsController,
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
      ParticipantService,
      OrderStore,
      TryEngine,
      ConfirmClaims,
      ConfirmService,
      CancelService,
      ReservationExpiry,
      OrderAnswers,
      RefundService,
      DueOrders,
      AdminService,
      PeriodicJobs,
      ReconciliationService,
      JobScheduler,
      { provide: OrderScheduler, useExisting: JobScheduler },
      { provide: BranchScheduler, useExisting: JobScheduler },
      { provide: WebhookScheduler, useExisting: JobScheduler },
      HealthService,
      MetricsScraper,
      OpsServer,
      WebhooksService,
    ];
    const workers: Provider[] = config.runsWorkers ? [JobWorkers, Sweeper, WebhookDelivery, WebhookPoller] : [];
    const http: Provider[] = config.runsHttp ? [ConsoleSessions, ConsoleStats] : [];
    return {
      module: AppModule,
      global: true,
      imports: [DatabaseModule, ScheduleModule.forRoot()],
      controllers: config.runsHttp ? HTTP_CONTROLLERS : [],
      providers: [...core, ...workers, ...http, ...(config.runsWorkers ? [Retention] : [])],
      exports: [AppConfig],
    };
  }
}
