import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { roleModule } from '../config/role-module.js';
import { ApiKeysController, AuditController, OperatorsController } from './access.controller.js';
import { ApiKeys } from './api-keys.js';
import { AuditLog } from './audit.js';
import { Operators } from './operators.js';

/** Identity and access (ROLE api, all): API keys, operators, the audit log; the console's sign-in and main.ts's check use them. */
@Module({})
export class AccessModule {
  static forRole(config: AppConfig): DynamicModule {
    return roleModule(AccessModule, config, () => ({
      controllers: config.runsHttp ? [ApiKeysController, OperatorsController, AuditController] : [],
      providers: config.runsHttp ? [ApiKeys, Operators, AuditLog] : [],
      exports: config.runsHttp ? [ApiKeys, Operators, AuditLog] : [],
    }));
  }
}
