import { Injectable } from '@nestjs/common';
import { toProblem } from '../common/errors.js';
import { settleWithin } from '../common/with-timeout.js';
import { Db } from '../database/db.js';
import { JobScheduler } from '../jobs/job-scheduler.js';

type Check = { status: 'up' | 'down' | 'degraded' };

export interface HealthAnswer {
  status: number;
  contentType: string;
  body: unknown;
}

/**
 * Liveness, readiness and the dependency check, for the public port and OPS_PORT alike.
 * Readiness needs Postgres only: checkout keeps working while Redis is away (the sweeper covers
 * what cannot be scheduled), so Redis down is "degraded", not "not ready". /health needs both.
 */
@Injectable()
export class HealthService {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobScheduler,
  ) {}

  live(): HealthAnswer {
    return { status: 200, contentType: 'application/json', body: { status: 'ok' } };
  }

  async health(): Promise<HealthAnswer> {
    const checks = await this.checks();
    if (checks.postgres.status === 'up' && checks.redis.status === 'up') return { status: 200, contentType: 'application/json', body: { status: 'ok', checks } };
    return { status: 503, contentType: 'application/problem+json', body: toProblem('SERVICE_UNAVAILABLE', 'a dependency is down', { checks }) };
  }

  async ready(): Promise<HealthAnswer> {
    const checks = await this.checks();
    if (checks.postgres.status !== 'up') {
      return { status: 503, contentType: 'application/problem+json', body: toProblem('SERVICE_UNAVAILABLE', 'Postgres cannot be reached', { checks }) };
    }
    const degraded = checks.redis.status !== 'up';
    return {
      status: 200,
      contentType: 'application/json',
      body: { status: degraded ? 'degraded' : 'ok', checks: { postgres: checks.postgres, redis: { status: degraded ? 'degraded' : 'up' } } },
    };
  }

  private async checks(): Promise<{ postgres: Check; redis: Check }> {
    const probe = async (work: () => Promise<unknown>): Promise<Check> => {
      let ok = false;
      const done = work().then(
        () => (ok = true),
        () => (ok = false),
      );
      return (await settleWithin(done, 1500)) === 'done' && ok ? { status: 'up' } : { status: 'down' };
    };
    const [postgres, redis] = await Promise.all([probe(() => this.db.ping()), probe(() => this.jobs.ping())]);
    return { postgres, redis };
  }
}
