import { Env, parseEnv } from './env.schema.js';

/** Typed configuration, read from the environment once per process and injected everywhere. */
export class AppConfig {
  constructor(readonly env: Env) {}

  static fromProcessEnv(): AppConfig {
    return new AppConfig(parseEnv(process.env));
  }

  get runsHttp(): boolean {
    return this.env.ROLE !== 'worker';
  }

  get runsWorkers(): boolean {
    return this.env.ROLE !== 'api';
  }
}
