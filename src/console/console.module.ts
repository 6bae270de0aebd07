import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { PeriodicModule } from '../database/periodic.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { ConsoleSessionController } from './console-session.controller.js';
import { ConsoleSessions } from './console-sessions.js';
import { ConsoleStats, ConsoleStatsController } from './console-stats.js';
import { SignInThrottle } from './sign-in-throttle.js';

/** The operator console's sessions and figures (ROLE api, all); main.ts serves its page. */
@Module({})
export class ConsoleModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(ConsoleModule, config, () => ({
      imports: [PaymentsModule, PeriodicModule],
      controllers: config.runsHttp ? [ConsoleSessionController, ConsoleStatsController] : [],
      providers: config.runsHttp ? [ConsoleSessions, ConsoleStats, SignInThrottle] : [],
    }));
  }
}
