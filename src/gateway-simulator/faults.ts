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
  // The same as charge_then_hang / charge_then_error, named for an authorization (capture: false).
  'authorize_then_hang',
  'authorize_then_error',
  // Captures and voids (captureScript, voidScript): the call is made, then the answer hangs or is a 500.
  'capture_then_hang',
  'capture_then_error',
  'void_then_hang',
  'void_then_error',
  // A capture or void that finds the authorization expired (it expires now): 409 expired.
  'expired',
] as const;

export type SimMode = (typeof SIM_MODES)[number];

/** Which modes each script takes: the new payments' (charges and authorizations), the captures', the voids'. */
const COMMON_MODES: readonly SimMode[] = ['ok', 'error', 'rate_limit', 'hang', 'slow_ok', 'refuse_400', 'refuse_401', 'refuse_403', 'refuse_404', 'refuse_422'];
export const SCRIPT_MODES: Record<ScriptName, readonly SimMode[]> = {
  script: [...COMMON_MODES, 'decline', 'charge_then_hang', 'charge_then_error', 'authorize_then_hang', 'authorize_then_error'],
  captureScript: [...COMMON_MODES, 'capture_then_hang', 'capture_then_error', 'expired'],
  voidScript: [...COMMON_MODES, 'void_then_hang', 'void_then_error', 'expired'],
};
export type ScriptName = 'script' | 'captureScript' | 'voidScript';
export const SCRIPT_NAMES: readonly ScriptName[] = ['script', 'captureScript', 'voidScript'];

export interface Faults {
  latencyMs: number;
  declineRate: number;
  errorRate: number;
  rateLimitRate: number;
  down: boolean;
  lookupDown: boolean;
  refundDown: boolean;
  captureDown: boolean;
  voidDown: boolean;
  hangMs: number;
  /** How long an authorization (capture: false) can be captured: SIM_AUTH_TTL_MS, default 7 days. */
  authTtlMs: number;
  /** One mode per new payment (a charge or an authorization). */
  script: SimMode[];
  /** One mode per new capture. */
  captureScript: SimMode[];
  /** One mode per new void. */
  voidScript: SimMode[];
}

/** Payment token that is always declined, so demos and tests need no script. */
export const DECLINE_TOKEN = 'tok_decline';

const MAX_DELAY_MS = 600_000;
const MAX_SCRIPT_LENGTH = 10_000;
const DAY_MS = 24 * 3600_000;
const MAX_AUTH_TTL_MS = 30 * DAY_MS;

export function defaultFaults(): Faults {
  return {
    latencyMs: 0,
    declineRate: 0,
    errorRate: 0,
    rateLimitRate: 0,
    down: false,
    lookupDown: false,
    refundDown: false,
    captureDown: false,
    voidDown: false,
    hangMs: 30_000,
    authTtlMs: 7 * DAY_MS,
    script: [],
    captureScript: [],
    voidScript: [],
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

export type FieldKind = 'delay' | 'rate' | 'bool' | 'ttl' | ScriptName;
const FIELD_KINDS: Record<keyof Faults, FieldKind> = {
  latencyMs: 'delay',
  declineRate: 'rate',
  errorRate: 'rate',
  rateLimitRate: 'rate',
  down: 'bool',
  lookupDown: 'bool',
  refundDown: 'bool',
  captureDown: 'bool',
  voidDown: 'bool',
  hangMs: 'delay',
  authTtlMs: 'ttl',
  script: 'script',
  captureScript: 'captureScript',
  voidScript: 'voidScript',
};

/** Why a value does not fit a field of its kind (undefined: it fits). */
export function checkField(kind: FieldKind, value: unknown): string | undefined {
  switch (kind) {
    case 'delay':
      return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_DELAY_MS
        ? undefined
        : `must be an integer between 0 and ${MAX_DELAY_MS}`;
    case 'ttl':
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_AUTH_TTL_MS
        ? undefined
        : `must be an integer between 1 and ${MAX_AUTH_TTL_MS}`;
    case 'rate':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1
        ? undefined
        : 'must be a number between 0 and 1';
    case 'bool':
      return typeof value === 'boolean' ? undefined : 'must be a boolean';
    default:
      return checkScript(value, kind);
  }
}

function checkScript(value: unknown, name: ScriptName = 'script'): string | undefined {
  if (!Array.isArray(value)) return 'must be an array of modes';
  if (value.length > MAX_SCRIPT_LENGTH) return `must have at most ${MAX_SCRIPT_LENGTH} entries`;
  const allowed = SCRIPT_MODES[name];
  const bad = value.find((m) => !isSimMode(m) || !allowed.includes(m));
  return bad === undefined ? undefined : `contains unknown mode ${JSON.stringify(bad)} (allowed: ${allowed.join(', ')})`;
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
    (patch as Record<string, unknown>)[key] = Array.isArray(value) ? [...(value as SimMode[])] : value;
  }
  return { ok: true, patch };
}

export function validateScript(input: unknown, name: ScriptName = 'script'): { ok: true; script: SimMode[] } | { ok: false; error: string } {
  const error = checkScript(input, name);
  return error ? { ok: false, error: `${name} ${error}` } : { ok: true, script: [...(input as SimMode[])] };
}

/**
 * POST /__control/script: `{ script?, captureScript?, voidScript? }`, at least one; each replaces
 * its queue (the others are left as they are).
 */
export function validateScripts(input: unknown): PatchResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, error: 'body must be a JSON object' };
  const patch: Partial<Faults> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(SCRIPT_NAMES as readonly string[]).includes(key)) return { ok: false, error: `unknown script "${key}" (allowed: ${SCRIPT_NAMES.join(', ')})` };
    const result = validateScript(value, key as ScriptName);
    if (!result.ok) return result;
    patch[key as ScriptName] = result.script;
  }
  if (Object.keys(patch).length === 0) return { ok: false, error: `script must be an array of modes (or give captureScript / voidScript)` };
  return { ok: true, patch };
}

export function mergeFaults(current: Faults, patch: Partial<Faults>): Faults {
  return {
    ...current,
    ...patch,
    script: [...(patch.script ?? current.script)],
    captureScript: [...(patch.captureScript ?? current.captureScript)],
    voidScript: [...(patch.voidScript ?? current.voidScript)],
  };
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

export interface StepDecision {
  mode: SimMode;
  /** That script left after this decision; the caller stores it. */
  rest: SimMode[];
}

/**
 * Picks the outcome of a new capture or void: the next mode of its script, else the error and
 * rate-limit rates (a flaky gateway is flaky on every call; declines are for new payments only).
 */
export function decideStep(faults: Faults, kind: 'captureScript' | 'voidScript', random: () => number = Math.random): StepDecision {
  const script = faults[kind];
  if (script.length > 0) {
    const [mode, ...rest] = script;
    return { mode: mode as SimMode, rest };
  }
  let mode: SimMode = 'ok';
  if (random() < faults.rateLimitRate) mode = 'rate_limit';
  else if (random() < faults.errorRate) mode = 'error';
  return { mode, rest: script };
}
