import {
  decideCharge,
  decideStep,
  defaultFaults,
  mergeFaults,
  refusalStatus,
  validateFaultsPatch,
  validateScript,
  validateScripts,
  type Faults,
} from './faults.js';
import { parseSimulatorEnv, SimulatorConfigError } from './sim-env.js';

const faultsWith = (patch: Partial<Faults>): Faults => mergeFaults(defaultFaults(), patch);
const sequence = (...values: number[]) => () => values.shift() ?? 0.99;

describe('decideCharge', () => {
  it('defaults to ok', () => {
    expect(decideCharge(defaultFaults(), undefined).mode).toBe('ok');
  });

  it('consumes the script one mode at a time', () => {
    const faults = faultsWith({ script: ['error', 'charge_then_hang'] });
    const first = decideCharge(faults, 'tok_x');
    expect(first).toEqual({ mode: 'error', script: ['charge_then_hang'] });
    expect(faults.script).toEqual(['error', 'charge_then_hang']);
    expect(decideCharge({ ...faults, script: first.script }, undefined)).toEqual({ mode: 'charge_then_hang', script: [] });
  });

  it('ignores rates while a script is queued', () => {
    const faults = faultsWith({ script: ['ok'], errorRate: 1 });
    expect(decideCharge(faults, undefined).mode).toBe('ok');
  });

  it('always declines tok_decline without consuming the script', () => {
    const faults = faultsWith({ script: ['error'] });
    expect(decideCharge(faults, 'tok_decline')).toEqual({ mode: 'decline', script: ['error'] });
  });

  it('applies rates in order rate limit, error, decline', () => {
    const faults = faultsWith({ rateLimitRate: 0.5, errorRate: 0.5, declineRate: 0.5 });
    expect(decideCharge(faults, undefined, sequence(0.1)).mode).toBe('rate_limit');
    expect(decideCharge(faults, undefined, sequence(0.9, 0.1)).mode).toBe('error');
    expect(decideCharge(faults, undefined, sequence(0.9, 0.9, 0.1)).mode).toBe('decline');
    expect(decideCharge(faults, undefined, sequence(0.9, 0.9, 0.9)).mode).toBe('ok');
  });

  it('never fires a zero rate and always fires a rate of one', () => {
    expect(decideCharge(faultsWith({ errorRate: 0 }), undefined, () => 0).mode).toBe('ok');
    expect(decideCharge(faultsWith({ declineRate: 1 }), undefined, () => 0.999999).mode).toBe('decline');
  });
});

describe('refusalStatus', () => {
  it('names the status of each refuse mode and nothing else', () => {
    expect(['refuse_400', 'refuse_401', 'refuse_403', 'refuse_404', 'refuse_422'].map((m) => refusalStatus(m as never))).toEqual([400, 401, 403, 404, 422]);
    expect(refusalStatus('ok')).toBeUndefined();
    expect(refusalStatus('slow_ok')).toBeUndefined();
  });

  it('refuse and slow_ok modes are accepted in scripts', () => {
    expect(validateScript(['refuse_401', 'slow_ok', 'refuse_422'])).toEqual({ ok: true, script: ['refuse_401', 'slow_ok', 'refuse_422'] });
    expect(validateScript(['refuse_500']).ok).toBe(false);
  });
});

describe('validateFaultsPatch', () => {
  it('accepts a valid partial patch', () => {
    expect(validateFaultsPatch({ latencyMs: 50, errorRate: 0.25, down: true, script: ['hang'] })).toEqual({
      ok: true,
      patch: { latencyMs: 50, errorRate: 0.25, down: true, script: ['hang'] },
    });
    expect(validateFaultsPatch({})).toEqual({ ok: true, patch: {} });
  });

  it.each([
    [null, /object/],
    [[], /object/],
    [{ errorRatio: 1 }, /unknown fault "errorRatio"/],
    [{ errorRate: 1.5 }, /errorRate/],
    [{ declineRate: '0.5' }, /declineRate/],
    [{ latencyMs: -1 }, /latencyMs/],
    [{ hangMs: 1.5 }, /hangMs/],
    [{ down: 'yes' }, /down/],
    [{ script: ['explode'] }, /unknown mode "explode"/],
    [{ script: 'ok' }, /script/],
    [{ script: ['capture_then_hang'] }, /unknown mode "capture_then_hang"/],
    [{ captureScript: ['decline'] }, /captureScript contains unknown mode "decline"/],
    [{ voidScript: ['charge_then_hang'] }, /voidScript/],
    [{ authTtlMs: 0 }, /authTtlMs/],
    [{ captureDown: 1 }, /captureDown/],
  ])('rejects %j', (input, message) => {
    const result = validateFaultsPatch(input);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(message);
  });

  it('validates bare scripts', () => {
    expect(validateScript(['ok', 'decline'])).toEqual({ ok: true, script: ['ok', 'decline'] });
    expect(validateScript(undefined).ok).toBe(false);
  });

  it('takes each call kind its own script, and only its modes', () => {
    expect(validateFaultsPatch({ captureScript: ['capture_then_error', 'expired'], voidScript: ['void_then_hang'], authTtlMs: 1000, voidDown: true })).toEqual({
      ok: true,
      patch: { captureScript: ['capture_then_error', 'expired'], voidScript: ['void_then_hang'], authTtlMs: 1000, voidDown: true },
    });
    expect(validateScript(['authorize_then_hang', 'authorize_then_error'])).toEqual({ ok: true, script: ['authorize_then_hang', 'authorize_then_error'] });
  });
});

describe('validateScripts (POST /__control/script)', () => {
  it('sets any of the three queues, leaving the others', () => {
    expect(validateScripts({ script: ['hang'] })).toEqual({ ok: true, patch: { script: ['hang'] } });
    expect(validateScripts({ captureScript: ['error'], voidScript: [] })).toEqual({ ok: true, patch: { captureScript: ['error'], voidScript: [] } });
  });

  it.each([[{}], [null], [{ refundScript: [] }], [{ captureScript: ['decline'] }]])('refuses %j', (input) => {
    expect(validateScripts(input).ok).toBe(false);
  });
});

describe('decideStep', () => {
  it('consumes its own script, then the error and rate-limit rates, never a decline', () => {
    const faults = faultsWith({ captureScript: ['capture_then_hang'], voidScript: ['expired'], script: ['decline'], declineRate: 1 });
    expect(decideStep(faults, 'captureScript')).toEqual({ mode: 'capture_then_hang', rest: [] });
    expect(decideStep(faults, 'voidScript')).toEqual({ mode: 'expired', rest: [] });
    const flaky = faultsWith({ rateLimitRate: 0.5, errorRate: 0.5, declineRate: 1 });
    expect(decideStep(flaky, 'captureScript', sequence(0.1)).mode).toBe('rate_limit');
    expect(decideStep(flaky, 'voidScript', sequence(0.9, 0.1)).mode).toBe('error');
    expect(decideStep(flaky, 'voidScript', sequence(0.9, 0.9)).mode).toBe('ok');
  });
});

describe('mergeFaults', () => {
  it('overrides only the given fields and copies the script', () => {
    const base = defaultFaults();
    const script: Faults['script'] = ['ok'];
    const merged = mergeFaults(base, { errorRate: 0.1, script });
    script.push('error');
    expect(merged).toEqual({ ...base, errorRate: 0.1, script: ['ok'] });
  });
});

describe('parseSimulatorEnv', () => {
  it('uses defaults for an empty environment', () => {
    expect(parseSimulatorEnv({})).toEqual({ port: 4000, faults: defaultFaults() });
  });

  it('reads every variable', () => {
    const config = parseSimulatorEnv({
      GATEWAY_PORT: '4100',
      PORT: '9999',
      SIM_LATENCY_MS: '20',
      SIM_DECLINE_RATE: '0.1',
      SIM_ERROR_RATE: '0.2',
      SIM_RATE_LIMIT_RATE: '0.3',
      SIM_HANG_MS: '500',
      SIM_DOWN: 'true',
      SIM_SCRIPT: 'ok, decline,charge_then_error',
      SIM_AUTH_TTL_MS: '60000',
      SIM_CAPTURE_SCRIPT: 'capture_then_error,expired',
      SIM_VOID_SCRIPT: 'void_then_hang',
    });
    expect(config).toEqual({
      port: 4100,
      faults: {
        ...defaultFaults(),
        latencyMs: 20,
        declineRate: 0.1,
        errorRate: 0.2,
        rateLimitRate: 0.3,
        hangMs: 500,
        down: true,
        authTtlMs: 60000,
        script: ['ok', 'decline', 'charge_then_error'],
        captureScript: ['capture_then_error', 'expired'],
        voidScript: ['void_then_hang'],
      },
    });
  });

  it('falls back to PORT when GATEWAY_PORT is unset', () => {
    expect(parseSimulatorEnv({ PORT: '5000' }).port).toBe(5000);
    expect(parseSimulatorEnv({ SIM_DOWN: '1' }).faults.down).toBe(true);
  });

  it.each([
    [{ GATEWAY_PORT: 'abc' }, 'GATEWAY_PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SIM_LATENCY_MS: '-5' }, 'SIM_LATENCY_MS'],
    [{ SIM_DECLINE_RATE: '2' }, 'SIM_DECLINE_RATE'],
    [{ SIM_ERROR_RATE: 'x' }, 'SIM_ERROR_RATE'],
    [{ SIM_RATE_LIMIT_RATE: '-0.1' }, 'SIM_RATE_LIMIT_RATE'],
    [{ SIM_HANG_MS: '1e9' }, 'SIM_HANG_MS'],
    [{ SIM_DOWN: 'maybe' }, 'SIM_DOWN'],
    [{ SIM_SCRIPT: 'ok,boom' }, 'SIM_SCRIPT'],
    [{ SIM_AUTH_TTL_MS: '0' }, 'SIM_AUTH_TTL_MS'],
    [{ SIM_CAPTURE_SCRIPT: 'decline' }, 'SIM_CAPTURE_SCRIPT'],
    [{ SIM_VOID_SCRIPT: 'boom' }, 'SIM_VOID_SCRIPT'],
  ])('rejects %j naming the variable', (env, name) => {
    expect(() => parseSimulatorEnv(env)).toThrow(SimulatorConfigError);
    expect(() => parseSimulatorEnv(env)).toThrow(new RegExp(`^${name} `));
  });
});
