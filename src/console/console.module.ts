import { DynamicModule, Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { PeriodicModule } from '../database/periodic.module.js';
import { CredentialThrottle } from '../http/credential-throttle.js';
import { redisConnection } from '../jobs/redis.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { ConsoleSessionController } from './console-session.controller.js';
import { ACCOUNT_THROTTLE, ConsoleSessions } from './console-sessions.js';
import { ConsoleStats, ConsoleStatsController } from './console-stats.js';

/** The one credential throttle of the process: the console's sign-in and every protected route's check (main.ts) share it. */
const credentialThrottle = {
  provide: CredentialThrottle,
  useFactory: (config: AppConfig) =>
    new CredentialThrottle({ redis: redisConnection(config.env, 'limiter'), prefix: config.env.QUEUE_PREFIX, windowMs: config.env.CREDENTIAL_THROTTLE_WINDOW_MS }),
  inject: [AppConfig],
};

/** Wrong passwords per account (API.md, "Operator console"): 10 within 15 minutes refuse that account's sign-in for the rest of them. */
const accountThrottle = {
  provide: ACCOUNT_THROTTLE,
  useFactory: (config: AppConfig) =>
    new CredentialThrottle({
      redis: redisConnection(config.env, 'limiter'),
      prefix: config.env.QUEUE_PREFIX,
      windowMs: config.env.ACCOUNT_THROTTLE_WINDOW_MS,
      limit: 10,
      counts: 'sign-in-failures',
    }),
  inject: [AppConfig],
};

/** The operator console's sessions and figures (ROLE api, all); main.ts serves its page. */
@Module({})
export class ConsoleModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(ConsoleModule, config, () => ({
      imports: [PaymentsModule, PeriodicModule, AccessModule.forRole(config)],
      controllers: config.runsHttp ? [ConsoleSessionController, ConsoleStatsController] : [],
      providers: config.runsHttp ? [ConsoleSessions, ConsoleStats, credentialThrottle, accountThrottle] : [],
    }));
  }
}
