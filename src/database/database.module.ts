import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './options.js';
import { Db } from './db.js';

@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      inject: [AppConfig],
      useFactory: async (config: AppConfig) => {
        const ds = new DataSource(dataSourceOptions(config.env.DATABASE_URL, config.env.DB_POOL_SIZE));
        return ds.initialize();
      },
    },
    { provide: Db, inject: [DataSource], useFactory: (ds: DataSource) => new Db(ds) },
  ],
  exports: [DataSource, Db],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
