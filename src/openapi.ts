import './common/node-version.js';
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { parseEnv } from './config/env.schema.js';
import { stableJson } from './ops/stable-json.js';
import { buildOpenApi } from './ops/swagger.js';

/**
 * `npm run openapi`: writes the OpenAPI document the service serves at /docs-json to
 * openapi.json, so the contract travels with the code and a route change shows in review.
 *
 * Needs no database and no Redis: the application is built in preview mode, which reads the
 * module graph and the controllers' decorators without instantiating a provider or running a
 * lifecycle hook, so no pool, queue or timer exists. The configuration is the defaults with
 * ROLE=api (the controllers are what the document describes), never the caller's environment: the
 * document must not depend on where it was generated.
 */
async function main(): Promise<void> {
  const out = resolve(process.argv[2] ?? 'openapi.json');
  const module = AppModule.forRole(new AppConfig(parseEnv({ ROLE: 'api' })));
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), { preview: true, logger: false, abortOnError: false });
  try {
    writeFileSync(out, stableJson(buildOpenApi(app)));
  } finally {
    await app.close();
  }
  process.stdout.write(`wrote ${out}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`openapi failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
