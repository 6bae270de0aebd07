import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Db } from '../database/db.js';
import { JobScheduler } from '../jobs/job-scheduler.js';

/** 200 when Postgres and Redis both answer; 503 (terminus) when either does not. */
@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly db: Db,
    private readonly jobs: JobScheduler,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([
      this.indicators
        .check('postgres')
        .attempt(async () => {
          await this.db.sql.one('SELECT 1');
        })
        .withTimeout(1500),
      this.indicators
        .check('redis')
        .attempt(async () => {
          await this.jobs.connection.ping();
        })
        .withTimeout(1500),
    ]);
  }
}
