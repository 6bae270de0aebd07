import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Db } from './db.js';
import { DeploymentKey } from './deployment-key.js';
import { SessionLocks } from './session-lock.js';

@Global()
@Module({
  providers: [
    {
      provide: Db,
      inject: [AppConfig],
      useFactory: ({ env }: AppConfig) =>
        new Db({
          url: env.DATABASE_URL,
          poolSize: env.DB_POOL_SIZE,
          applicationName: `tcc-${env.ROLE}`,
          readUrl: env.DATABASE_READ_URL,
          maxLagMs: env.READ_REPLICA_MAX_LAG_MS,
        }),
    },
    {
      provide: SessionLocks,
      inject: [AppConfig],
      useFactory: ({ env }: AppConfig) => new SessionLocks(env.DATABASE_DIRECT_URL, `tcc-${env.ROLE}`),
    },
    { provide: DeploymentKey, inject: [Db], useFactory: (db: Db) => DeploymentKey.load(db) },
  ],
  exports: [Db, DeploymentKey, SessionLocks],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SessionLocks) private readonly locks: SessionLocks,
  ) {}

  /** Last: after HTTP has drained and the workers have stopped (and with them every periodic job). */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.db.close(), this.locks.close()]);
  }
}
