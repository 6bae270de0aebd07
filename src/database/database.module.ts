import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from './db.js';

@Global()
@Module({
  providers: [
    {
      provide: Db,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new Db({ url: config.env.DATABASE_URL, poolSize: config.env.DB_POOL_SIZE, applicationName: `tcc-${config.env.ROLE}` }),
    },
  ],
  exports: [Db],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(Db) private readonly db: Db) {}

  /** Last: after HTTP has drained and the workers have stopped. */
  async onApplicationShutdown(): Promise<void> {
    await this.db.close();
  }
}
