import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from './app-config.js';

/**
 * The configuration, parsed once by the entry (main.ts) and handed to every module. Global, like
 * the pool (database.module.ts): every module reads it, none owns it.
 */
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ConfigModule, global: true, providers: [{ provide: AppConfig, useValue: config }], exports: [AppConfig] };
  }
}
