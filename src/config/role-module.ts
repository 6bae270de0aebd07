import type { DynamicModule, Type } from '@nestjs/common';
import type { AppConfig } from './app-config.js';

const built = new WeakMap<AppConfig, Map<Type, DynamicModule>>();

/**
 * A module as one ROLE composes it (controllers only when the process serves HTTP, workers only
 * when it runs them), built once per configuration. Nest tells modules apart by reference: a
 * module that several others import (orders by jobs, recovery, admin and the application) must
 * be the same object each time, or its providers would exist twice.
 */
export function roleModule(module: Type, config: AppConfig, build: (config: AppConfig) => Omit<DynamicModule, 'module'>): DynamicModule {
  let modules = built.get(config);
  if (!modules) built.set(config, (modules = new Map()));
  let composed = modules.get(module);
  if (!composed) modules.set(module, (composed = { module, ...build(config) }));
  return composed;
}
