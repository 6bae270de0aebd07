import { Injectable } from '@nestjs/common';
import { toProblem } from '../common/errors.js';
import { settleWithin } from '../common/with-timeout.js';
import { AppConfig } from '../config/app-config.js';
import { Db } from '../database/db.js';
import { SessionLocks } from '../database/session-lock.js';
import type { ReplicaState } from '../database/replica-reads.js';
import { JobScheduler } from '../jobs/job-scheduler.js';
import { describe, RedisFailures } from '../jobs/redis-failures.js';

type Check = { status: 'up' | 'down' | 'degraded'; reason?: string };

const PROBE_MS = 1500;

export interface HealthAnswer {
  status: number;
  contentType: string;
  body: unknown;
}

/**
 * Liveness, readiness and the dependency check, for the public port and OPS_PORT alike.
 * Readiness needs Postgres only: checkout keeps working while Redis is away (the sweeper covers
 * what cannot be scheduled), so Redis failing is "degraded", not "not ready". /health needs both.
 * Redis is up only when it answers for every queue and no worker of this process saw its commands
 * fail lately; else it is degraded, with the reason (a ping alone said "up" while every worker on
 * a cluster failed CROSSSLOT). A read replica (DATABASE_READ_URL) that lags or is away is
 * "degraded" in both and fails neither: its reads go to the primary meanwhile. Its state comes from
 * the background lag check (database/replica-reads.ts), so a health request adds no round trip to it.
 * So is a process that runs the periodic jobs but cannot elect itself for them (DATABASE_DIRECT_URL
 * failing while the pool works): `periodicJobs` degraded, with the reason, from its last election.
 */
@Injectable()
export class HealthService {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobScheduler,
    private readonly failures: RedisFailures,
    private readonly locks: SessionLocks,
    private readonly config: AppConfig,
  ) {}

  live(): HealthAnswer {
    return { status: 200, contentType: 'application/json', body: { status: 'ok' } };
  }

  async health(): Promise<HealthAnswer> {
    const checks = await this.checks();
    if (checks.postgres.status === 'up' && checks.redis.status === 'up') {
      return { status: 200, contentType: 'application/json', body: { status: softlyDegraded(checks) ? 'degraded' : 'ok', checks } };
    }
    return { status: 503, contentType: 'application/problem+json', body: toProblem('SERVICE_UNAVAILABLE', 'a dependency is down', { checks }) };
  }

  async ready(): Promise<HealthAnswer> {
    const checks = await this.checks();
    if (checks.postgres.status !== 'up') {
      return { status: 503, contentType: 'application/problem+json', body: toProblem('SERVICE_UNAVAILABLE', 'Postgres cannot be reached', { checks }) };
    }
    const redisDegraded = checks.redis.status !== 'up';
    const degraded = redisDegraded || softlyDegraded(checks);
    return {
      status: 200,
      contentType: 'application/json',
      body: { status: degraded ? 'degraded' : 'ok', checks },
    };
  }

  private async checks(): Promise<{ postgres: Check; redis: Check; replica?: ReplicaState; periodicJobs?: Check }> {
    const probe = async (work: () => Promise<unknown>): Promise<Check & { error?: string }> => {
      let error: string | undefined;
      const done = work().then(
        () => undefined,
        (err: Error) => (error = describe(err)),
      );
      if ((await settleWithin(done, PROBE_MS)) === 'timeout') return { status: 'down', error: `no answer within ${PROBE_MS} ms` };
      return error === undefined ? { status: 'up' } : { status: 'down', error };
    };
    const [postgres, redisProbe] = await Promise.all([probe(() => this.db.ping()), probe(() => this.jobs.probe())]);
    const failing = this.failures.failing();
    const redis: Check =
      redisProbe.status !== 'up'
        ? { status: 'degraded', reason: redisProbe.error }
        : failing
          ? { status: 'degraded', reason: `${failing.queue} worker: ${failing.reason}` }
          : { status: 'up' };
    const replica = this.db.replica?.state();
    // A process that runs the periodic jobs elects itself on DATABASE_DIRECT_URL: while that fails,
    // none of them runs here (the sweeper, the poller, reconciliation…), whatever the pool says.
    const periodicJobs = this.config.runsWorkers ? electionCheck(this.locks.failing()) : undefined;
    return { postgres: { status: postgres.status }, redis, ...(replica ? { replica } : {}), ...(periodicJobs ? { periodicJobs } : {}) };
  }
}

/** What makes either answer `degraded` and neither fail: the replica, and the periodic jobs' election. */
function softlyDegraded(checks: { replica?: ReplicaState; periodicJobs?: Check }): boolean {
  return checks.replica?.status === 'degraded' || checks.periodicJobs?.status === 'degraded';
}

function electionCheck(failing: string | undefined): Check {
  return failing ? { status: 'degraded', reason: failing } : { status: 'up' };
}
