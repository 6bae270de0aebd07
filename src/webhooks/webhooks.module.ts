import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { PeriodicModule } from '../database/periodic.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { WebhookDelivery } from './webhook-delivery.js';
import { WebhookPoller } from './webhook-poller.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhook endpoints (the operator's API) and the sending of what the outbox holds (tcc_emit
 * writes it in the transaction of each change): the poller and the delivery run on workers. Its
 * WebhookScheduler port is provided by jobs/ (scheduling.module.ts).
 */
@Module({})
export class WebhooksModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(WebhooksModule, config, () => {
      const workers = config.runsWorkers ? [WebhookDelivery, WebhookPoller] : [];
      return {
        imports: [MetricsModule, PeriodicModule],
        controllers: config.runsHttp ? [WebhooksController] : [],
        providers: [WebhooksService, ...workers],
        exports: config.runsWorkers ? [WebhookDelivery] : [],
      };
    });
  }
}
