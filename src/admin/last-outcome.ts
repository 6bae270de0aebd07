/**
 * Why a CONFIRM_PENDING order waits, in words: its last gateway call's outcome as the timeline
 * recorded it (a payment.charge, payment.lookup or payment.breaker_rejected event's data).
 */
export interface LastOutcome {
  /** The step that met it: a charge attempt, or the lookup once the attempts are used up. */
  step: 'charge' | 'lookup';
  reason: 'timeout' | 'error' | 'unreachable' | 'circuit_open';
  /** The gateway's HTTP status when it answered one (5xx, 429…), else null. */
  httpStatus: number | null;
  /** "gateway timed out", "gateway error 503", "breaker open", "lookup failed: gateway timed out". */
  text: string;
  at: string;
}

/** The unknown-outcome messages of payments/gateway.http.ts. */
const ANSWERED = /gateway answered (\d{3})\b/;
const UNREACHABLE = /gateway unreachable/;

export function lastOutcomeOf(type: string | null, at: Date | string | null, data: Record<string, unknown> | null): LastOutcome | null {
  if (!type || !at || !data) return null;
  const detail = typeof data.detail === 'string' ? data.detail : '';
  const answered = ANSWERED.exec(detail);
  const httpStatus = answered ? Number(answered[1]) : null;
  let reason: LastOutcome['reason'];
  if (data.reason === 'circuit_open') reason = 'circuit_open';
  else if (data.reason === 'timeout') reason = 'timeout';
  else if (UNREACHABLE.test(detail)) reason = 'unreachable';
  else reason = 'error';
  // A charge refused by the open breaker is recorded with outcome "unknown"; a lookup's with "failed".
  const step = type === 'payment.lookup' || data.outcome === 'failed' ? 'lookup' : 'charge';
  const words = {
    circuit_open: 'breaker open',
    timeout: 'gateway timed out',
    unreachable: 'gateway unreachable',
    error: httpStatus ? `gateway error ${httpStatus}` : 'gateway error',
  }[reason];
  return { step, reason, httpStatus, text: step === 'lookup' ? `lookup failed: ${words}` : words, at: new Date(at).toISOString() };
}
