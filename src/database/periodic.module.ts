import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { PeriodicJobs } from './periodic.js';

/** Work every N ms under a session advisory lock (periodic.ts), for the modules that run some. */
@Module({
  imports: [ScheduleModule.forRoot()],
  providers: [PeriodicJobs],
  exports: [PeriodicJobs],
})
export class PeriodicModule {}
