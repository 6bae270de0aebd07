// The simulator's start-up configuration, from its environment (SIM_*, GATEWAY_PORT or PORT).
import { checkField, defaultFaults, validateScript, type Faults, type ScriptName, type SimMode } from './faults.js';

export class SimulatorConfigError extends Error {
  override name = 'SimulatorConfigError';
}

export interface SimulatorConfig {
  port: number;
  faults: Faults;
}

type Env = Record<string, string | undefined>;

function readNumber(env: Env, name: string, kind: 'delay' | 'rate'): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  const error = checkField(kind, value);
  if (error) throw new SimulatorConfigError(`${name} ${error}, got ${JSON.stringify(raw)}`);
  return value;
}

function readTtl(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  const error = checkField('ttl', value);
  if (error) throw new SimulatorConfigError(`${name} ${error}, got ${JSON.stringify(raw)}`);
  return value;
}

function readScript(env: Env, name: string, script: ScriptName): SimMode[] | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const modes = raw.split(',').map((m) => m.trim()).filter((m) => m !== '');
  const result = validateScript(modes, script);
  if (!result.ok) throw new SimulatorConfigError(`${name} ${result.error.replace(/^\w+ /, '')}`);
  return result.script;
}

function readBool(env: Env, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const v = raw.trim().toLowerCase();
  if (v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false') return false;
  throw new SimulatorConfigError(`${name} must be one of 1, true, 0, false, got ${JSON.stringify(raw)}`);
}

function readPort(env: Env): number {
  const name = env.GATEWAY_PORT !== undefined && env.GATEWAY_PORT !== '' ? 'GATEWAY_PORT' : 'PORT';
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return 4000;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SimulatorConfigError(`${name} must be an integer between 0 and 65535, got ${JSON.stringify(raw)}`);
  }
  return port;
}

/** Reads the simulator's start-up configuration; throws naming the bad variable. */
export function parseSimulatorEnv(env: Env): SimulatorConfig {
  const faults = defaultFaults();
  const set = <K extends keyof Faults>(key: K, value: Faults[K] | undefined): void => {
    if (value !== undefined) faults[key] = value;
  };
  set('latencyMs', readNumber(env, 'SIM_LATENCY_MS', 'delay'));
  set('declineRate', readNumber(env, 'SIM_DECLINE_RATE', 'rate'));
  set('errorRate', readNumber(env, 'SIM_ERROR_RATE', 'rate'));
  set('rateLimitRate', readNumber(env, 'SIM_RATE_LIMIT_RATE', 'rate'));
  set('hangMs', readNumber(env, 'SIM_HANG_MS', 'delay'));
  set('authTtlMs', readTtl(env, 'SIM_AUTH_TTL_MS'));
  set('down', readBool(env, 'SIM_DOWN'));
  set('script', readScript(env, 'SIM_SCRIPT', 'script'));
  set('captureScript', readScript(env, 'SIM_CAPTURE_SCRIPT', 'captureScript'));
  set('voidScript', readScript(env, 'SIM_VOID_SCRIPT', 'voidScript'));
  return { port: readPort(env), faults };
}
