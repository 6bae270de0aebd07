// Fault injection for the gateway simulator. Everything here is pure so the
// decision logic can be unit-tested without sockets or timers.

export const SIM_MODES = [
  'ok',
  'decline',
  'error',
  'rate_limit',
  'hang',
  'charge_then_hang',
  'charge_then_error',
  // Waits hangMs, then charges and answers 201: a charge that lands late, while the client waits.
  'slow_ok',
  // A final refusal of the request (nothing charged), with the HTTP status in the name.
  'refuse_400',
  'refuse_401',
  'refuse_403',
  'refuse_404',
  'refuse_422',
] as const;

export type SimMode = (typeof SIM_MODES)[number];

export interface Faults {
  latencyMs: number;
  declineRate: number;
  errorRate: number;
  rateLimitRate: number;
  down: boolean;
  lookupDown: boolean;
  refundDown: boolean;
  hangMs: number;
  script: SimMode[];
}

/** Payment token that is always declined, so demos and tests need no script. */
export const DECLINE_TOKEN = 'tok_decline';

const MAX_DELAY_MS = 600_000;
const MAX_SCRIPT_LENGTH = 10_000;

export function defaultFaults(): Faults {
  return {
    latencyMs: 0,
    declineRate: 0,
    errorRate: 0,
    rateLimitRate: 0,
    down: false,
    lookupDown: false,
    refundDown: false,
    hangMs: 30_000,
    script: [],
  };
}

/** The HTTP status a refuse_<status> mode answers with, or undefined for other modes. */
export function refusalStatus(mode: SimMode): number | undefined {
  const m = /^refuse_(\d{3})$/.exec(mode);
  return m ? Number(m[1]) : undefined;
}

export function isSimMode(value: unknown): value is SimMode {
  return typeof value === 'string' && (SIM_MODES as readonly string[]).includes(value);
}

export type PatchResult = { ok: true; patch: Partial<Faults> } | { ok: false; error: string };

type FieldKind = 'delay' | 'rate' | 'bool' | 'script';
const FIELD_KINDS: Record<keyof Faults, FieldKind> = {
  latencyMs: 'delay',
  declineRate: 'rate',
  errorRate: 'rate',
  rateLimitRate: 'rate',
  down: 'bool',
  lookupDown: 'bool',
  refundDown: 'bool',
  hangMs: 'delay',
  script: 'script',
};

function checkField(kind: FieldKind, value: unknown): string | undefined {
  switch (kind) {
    case 'delay':
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_DELAY_MS
        ? undefined
        : `must be an integer between 0 and ${MAX_DELAY_MS}`;
    case 'rate':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1
        ? undefined
        : 'must be a number between 0 and 1';
    case 'bool':
      return typeof value === 'boolean' ? undefined : 'must be a boolean';
    case 'script':
      return checkScript(value);
  }
}

function checkScript(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'must be an array of modes';
  if (value.length > MAX_SCRIPT_LENGTH) return `must have at most ${MAX_SCRIPT_LENGTH} entries`;
  const bad = value.find((m) => !isSimMode(m));
  return bad === undefined ? undefined : `contains unknown mode ${JSON.stringify(bad)} (allowed: ${SIM_MODES.join(', ')})`;
}

/**
 * Validates a partial faults object. Unknown keys are rejected because a typo
 * in a test ("errorRatio") would otherwise silently disable the fault.
 */
export function validateFaultsPatch(input: unknown): PatchResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, error: 'faults must be a JSON object' };
  }
  const patch: Partial<Faults> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!Object.hasOwn(FIELD_KINDS, key)) return { ok: false, error: `unknown fault "${key}"` };
    const error = checkField(FIELD_KINDS[key as keyof Faults], value);
    if (error) return { ok: false, error: `${key} ${error}` };
    (patch as Record<string, unknown>)[key] = key === 'script' ? [...(value as SimMode[])] : value;
  }
  return { ok: true, patch };
}

export function validateScript(input: unknown): { ok: true; script: SimMode[] } | { ok: false; error: string } {
  const error = checkScript(input);
  return error ? { ok: false, error: `script ${error}` } : { ok: true, script: [...(input as SimMode[])] };
}

export function mergeFaults(current: Faults, patch: Partial<Faults>): Faults {
  return { ...current, ...patch, script: [...(patch.script ?? current.script)] };
}

export interface ChargeDecision {
  mode: SimMode;
  /** The script left after this decision; the caller stores it. */
  script: SimMode[];
}

/**
 * Picks the outcome of a new (non-replayed) charge request. The decline token
 * wins over everything and does not consume the script, so a scripted test is
 * not thrown off by a demo charge in between.
 */
export function decideCharge(
  faults: Faults,
  paymentToken: string | undefined,
  random: () => number = Math.random,
): ChargeDecision {
  if (paymentToken === DECLINE_TOKEN) return { mode: 'decline', script: faults.script };
  if (faults.script.length > 0) {
    const [mode, ...rest] = faults.script;
    return { mode: mode as SimMode, script: rest };
  }
  let mode: SimMode = 'ok';
  if (random() < faults.rateLimitRate) mode = 'rate_limit';
  else if (random() < faults.errorRate) mode = 'error';
  else if (random() < faults.declineRate) mode = 'decline';
  return { mode, script: faults.script };
}

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
  set('down', readBool(env, 'SIM_DOWN'));
  const rawScript = env.SIM_SCRIPT;
  if (rawScript !== undefined && rawScript.trim() !== '') {
    const modes = rawScript.split(',').map((m) => m.trim()).filter((m) => m !== '');
    const result = validateScript(modes);
    if (!result.ok) throw new SimulatorConfigError(`SIM_SCRIPT ${result.error.replace(/^script /, '')}`);
    faults.script = result.script;
  }
  return { port: readPort(env), faults };
}
