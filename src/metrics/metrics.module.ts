import { Module } from '@nestjs/common';
import { MetricsService } from './metrics.service.js';

/** This process's Prometheus registry and every series it counts. */
@Module({
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
