import type http from 'node:http';
import { decideStep, refusalStatus, type Faults } from './faults.js';
import { error, readJson, requireAmount, requireKey, requireObject, type Reply } from './http-io.js';
import type { Ledger, StepAnswer } from './ledger.js';

const replay = (a: StepAnswer): Reply => ({ status: a.status, body: a.body, headers: { 'idempotent-replayed': 'true' } });
const answer = (a: StepAnswer): Reply => ({ status: a.status, body: a.body });

/**
 * An authorization's two ends: POST /payments/{id}/capture (body `{ amountMinor }`, at most what
 * was authorized) and POST /payments/{id}/void. Each takes an Idempotency-Key and replays its first
 * answer; the faults of its own script (captureScript, voidScript) or the error and rate-limit
 * rates decide whether it happens and how it is answered.
 */
export function holdRoutes(ledger: Ledger, faults: Faults) {
  const unavailable = (): Reply => error(503, 'unavailable', 'gateway unavailable (simulated)');

  /** The fault's effect around the ledger's decision: before it (nothing happens), or after it (the answer is lost). */
  function run(kind: 'capture' | 'void', paymentId: string, act: () => StepAnswer): Reply {
    const decision = decideStep(faults, kind === 'capture' ? 'captureScript' : 'voidScript');
    faults[kind === 'capture' ? 'captureScript' : 'voidScript'] = decision.rest;
    const refusal = refusalStatus(decision.mode);
    if (refusal !== undefined) return error(refusal, 'refused', `simulated final refusal (${refusal}); nothing changed`);
    switch (decision.mode) {
      case 'error':
        return error(500, 'internal_error', `simulated failure before the ${kind}`);
      case 'rate_limit':
        return error(429, 'rate_limited', 'simulated rate limit', { headers: { 'retry-after': '1' } });
      case 'hang':
        return error(504, 'gateway_timeout', `simulated hang before the ${kind}`, { delayMs: faults.hangMs });
      case 'capture_then_hang':
      case 'void_then_hang':
        return { ...answer(act()), delayMs: faults.hangMs };
      case 'capture_then_error':
      case 'void_then_error':
        act();
        return error(500, 'internal_error', `simulated failure after the ${kind}`);
      case 'slow_ok':
        // Made when the wait is over, if the client is still there.
        return { status: 200, body: null, delayMs: faults.hangMs, later: () => answer(act()) };
      case 'expired':
        ledger.expireNow(paymentId);
        return answer(act());
      default:
        return answer(act());
    }
  }

  async function capture(req: http.IncomingMessage, paymentId: string): Promise<Reply> {
    if (faults.captureDown) return unavailable();
    ledger.countStepRequest('capture');
    const key = requireKey(req);
    const amountMinor = requireAmount(requireObject(await readJson(req)).amountMinor);
    const fingerprint = JSON.stringify([paymentId, amountMinor]);
    const seen = ledger.lookupStep('capture', key, fingerprint);
    if (seen.kind === 'conflict') return error(422, 'idempotency_key_reused', 'Idempotency-Key was used with a different body');
    if (seen.kind === 'replay') return replay(seen.value);
    return run('capture', paymentId, () => {
      // A capture that waited (slow_ok) may find its key answered meanwhile.
      const again = ledger.lookupStep('capture', key, fingerprint);
      return again.kind === 'replay' ? again.value : ledger.capture(key, fingerprint, paymentId, amountMinor);
    });
  }

  async function voidHold(req: http.IncomingMessage, paymentId: string): Promise<Reply> {
    if (faults.voidDown) return unavailable();
    ledger.countStepRequest('void');
    const key = requireKey(req);
    const body = await readJson(req);
    if (body !== undefined) requireObject(body);
    const fingerprint = JSON.stringify([paymentId]);
    const seen = ledger.lookupStep('void', key, fingerprint);
    if (seen.kind === 'conflict') return error(422, 'idempotency_key_reused', 'Idempotency-Key was used with a different payment');
    if (seen.kind === 'replay') return replay(seen.value);
    return run('void', paymentId, () => {
      const again = ledger.lookupStep('void', key, fingerprint);
      return again.kind === 'replay' ? again.value : ledger.void(key, fingerprint, paymentId);
    });
  }

  return { capture, void: voidHold };
}
