import 'reflect-metadata';
import { INestApplicationContext, Type } from '@nestjs/common';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { parseEnv } from './config/env.schema.js';
import { ConsoleSessions } from './console/console-sessions.js';
import { JobWorkers } from './jobs/job-workers.js';
import { Retention } from './recovery/retention.js';
import { Sweeper } from './recovery/sweeper.js';
import { WebhookPoller } from './webhooks/webhook-poller.js';

/** The module graph for a ROLE, read in preview mode: nothing is instantiated, nothing connects. */
async function graph(role: 'api' | 'worker' | 'all'): Promise<{ app: INestApplicationContext; modules: string[]; controllers: string[]; providers: Set<unknown> }> {
  const app = await NestFactory.createApplicationContext(AppModule.forRole(new AppConfig(parseEnv({ ROLE: role }))), { preview: true, logger: false, abortOnError: false });
  const container = app.get(ModulesContainer);
  const refs = [...container.values()];
  return {
    app,
    modules: refs.map((m) => m.metatype.name),
    controllers: refs.flatMap((m) => [...m.controllers.keys()].map((c) => (c as Type).name)),
    providers: new Set(refs.flatMap((m) => [...m.providers.keys()])),
  };
}

describe('AppModule.forRole', () => {
  it.each(['api', 'worker', 'all'] as const)('ROLE=%s: every module is one instance, however many modules import it', async (role) => {
    const { app, modules } = await graph(role);
    try {
      const repeated = modules.filter((name, i) => modules.indexOf(name) !== i);
      expect(repeated).toEqual([]);
      expect(modules).toEqual(expect.arrayContaining(['OrdersModule', 'InventoryModule', 'PaymentsModule', 'JobsModule', 'WebhooksModule', 'RecoveryModule', 'AccessModule', 'AdminModule', 'ConsoleModule', 'OpsModule', 'DatabaseModule']));
    } finally {
      await app.close();
    }
  });

  it('serves controllers only when the role serves HTTP, and runs workers only when it runs workers', async () => {
    const api = await graph('api');
    const worker = await graph('worker');
    const all = await graph('all');
    try {
      expect(worker.controllers).toEqual([]);
      expect(api.controllers.length).toBe(19);
      expect([...all.controllers].sort()).toEqual([...api.controllers].sort());
      const workers = [JobWorkers, Sweeper, Retention, WebhookPoller];
      for (const w of workers) {
        expect(api.providers.has(w)).toBe(false);
        expect(worker.providers.has(w)).toBe(true);
        expect(all.providers.has(w)).toBe(true);
      }
      expect(api.providers.has(ConsoleSessions)).toBe(true);
      expect(worker.providers.has(ConsoleSessions)).toBe(false);
    } finally {
      await Promise.all([api.app.close(), worker.app.close(), all.app.close()]);
    }
  });
});
