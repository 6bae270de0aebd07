import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { SchedulingModule } from '../jobs/scheduling.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { MetricsController, MetricsScraper } from './metrics.controller.js';
import { OpsServer } from './ops-server.js';

/** Health and the metrics scrape, on the public port (ROLE api, all) and on OPS_PORT (every role). */
@Module({})
export class OpsModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(OpsModule, config, () => ({
      imports: [MetricsModule, PaymentsModule, SchedulingModule],
      controllers: config.runsHttp ? [HealthController, MetricsController] : [],
      providers: [HealthService, MetricsScraper, OpsServer],
    }));
  }
}
