import { randomUUID } from 'node:crypto';

// In-memory books of the simulated gateway. No I/O and no timers: the server
// decides when to answer, the ledger only decides what happened. Time is read
// from the clock it is given (an authorization expires by it).

/**
 * A charge is `succeeded` or `declined`. An authorization (`capture: false`) is `authorized`
 * until it is captured (`succeeded`), voided (`voided`) or outlives its expiry (`expired`), or
 * `declined` from the start.
 */
export type PaymentStatus = 'succeeded' | 'declined' | 'authorized' | 'voided' | 'expired';

export interface Payment {
  id: string;
  status: PaymentStatus;
  /** What was charged, or authorized. */
  amountMinor: number;
  currency: string;
  reference: string;
  refundedMinor: number;
  /** Authorizations only: what was captured of it (0 until captured). */
  capturedMinor?: number;
  /** Authorizations only: until when it can be captured. */
  authorizationExpiresAt?: string;
}

export interface Refund {
  id: string;
  paymentId: string;
  status: 'succeeded';
  amountMinor: number;
}

/** A capture or a void as the books record it: which authorization, and (a capture) how much. */
export interface HoldChange {
  paymentId: string;
  amountMinor?: number;
}

/** One POST /payments as the gateway received it: what a test needs to see which token was charged. */
export interface ChargeAttempt {
  reference: string;
  paymentToken: string | null;
}

export interface LedgerSnapshot {
  /** Charges and authorizations, each as it stands now. */
  payments: Payment[];
  refunds: Refund[];
  captures: HoldChange[];
  voids: HoldChange[];
  chargeRequests: number;
  /** POST /payments that charge (capture true, the default). */
  chargeAttempts: ChargeAttempt[];
  /** POST /payments with capture: false. */
  authorizeAttempts: ChargeAttempt[];
  captureRequests: number;
  voidRequests: number;
}

export interface ChargeInput {
  amountMinor: number;
  currency: string;
  reference: string;
}

export type IdempotencyLookup<T> =
  | { kind: 'new' }
  | { kind: 'replay'; value: T }
  | { kind: 'conflict' };

export type RefundResult =
  | { ok: true; refund: Refund }
  | { ok: false; reason: 'payment_not_found' | 'payment_declined' | 'exceeds_captured' };

/** What a capture or a void answers: kept with its key and replayed as it was. */
export interface StepAnswer {
  status: number;
  body: unknown;
}

interface KeyRecord {
  fingerprint: string;
  resultId: string;
}

export type IdGenerator = (prefix: 'pay' | 're') => string;

const defaultIds: IdGenerator = (prefix) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

const error = (status: number, code: string, message: string): StepAnswer => ({ status, body: { error: code, message } });

export class Ledger {
  private readonly payments = new Map<string, Payment>();
  /** When each authorization expires (epoch ms). */
  private readonly expiries = new Map<string, number>();
  /** Each authorization as first answered: a repeat of its key replays that answer, not today's state. */
  private readonly firstAnswers = new Map<string, Payment>();
  /** Payment ids by reference, in the order they were made: a lookup reads its own, not the whole book. */
  private readonly byReference = new Map<string, string[]>();
  private readonly refunds = new Map<string, Refund>();
  private readonly captures: HoldChange[] = [];
  private readonly voids: HoldChange[] = [];
  // Each endpoint has its own key space, as with real gateways' per-endpoint idempotency, so a
  // client reusing an order id as several keys is safe.
  private readonly chargeKeys = new Map<string, KeyRecord>();
  private readonly refundKeys = new Map<string, KeyRecord>();
  private readonly stepKeys = { capture: new Map<string, { fingerprint: string; answer: StepAnswer }>(), void: new Map<string, { fingerprint: string; answer: StepAnswer }>() };
  private chargeRequests = 0;
  private captureRequests = 0;
  private voidRequests = 0;
  private readonly attempts: ChargeAttempt[] = [];
  private readonly authorizeAttempts: ChargeAttempt[] = [];

  constructor(
    private readonly nextId: IdGenerator = defaultIds,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts every POST /payments that reached the ledger, replays included, and logs its reference and token. */
  countChargeRequest(attempt?: { reference: string; paymentToken?: string }, authorize = false): void {
    this.chargeRequests += 1;
    if (attempt) (authorize ? this.authorizeAttempts : this.attempts).push({ reference: attempt.reference, paymentToken: attempt.paymentToken ?? null });
  }

  countStepRequest(kind: 'capture' | 'void'): void {
    if (kind === 'capture') this.captureRequests += 1;
    else this.voidRequests += 1;
  }

  lookupCharge(key: string, fingerprint: string): IdempotencyLookup<Payment> {
    return this.lookup(this.chargeKeys, key, fingerprint, (id) => this.firstAnswers.get(id) ?? this.view(id));
  }

  /** Records a payment (succeeded or declined) and binds it to the key. */
  charge(key: string, fingerprint: string, input: ChargeInput, status: 'succeeded' | 'declined'): Payment {
    return this.record(key, fingerprint, { ...input, status, refundedMinor: 0 });
  }

  /** Records an authorization (authorized for `ttlMs`, or declined) and binds it to the key. */
  authorize(key: string, fingerprint: string, input: ChargeInput, status: 'authorized' | 'declined', ttlMs: number): Payment {
    const expiresAt = this.now() + ttlMs;
    const payment = this.record(key, fingerprint, { ...input, status, refundedMinor: 0, capturedMinor: 0, authorizationExpiresAt: new Date(expiresAt).toISOString() });
    this.expiries.set(payment.id, expiresAt);
    this.firstAnswers.set(payment.id, { ...payment });
    return payment;
  }

  lookupStep(kind: 'capture' | 'void', key: string, fingerprint: string): IdempotencyLookup<StepAnswer> {
    const record = this.stepKeys[kind].get(key);
    if (!record) return { kind: 'new' };
    return record.fingerprint === fingerprint ? { kind: 'replay', value: structuredClone(record.answer) } : { kind: 'conflict' };
  }

  /**
   * Captures up to what was authorized (the rest is released): 200 succeeded; 409 with the payment
   * when it can no longer be captured (expired, voided, or captured already); 404 and 422 are not
   * bound to the key (the client may correct the request).
   */
  capture(key: string, fingerprint: string, paymentId: string, amountMinor: number): StepAnswer {
    const p = this.current(paymentId);
    if (!p) return error(404, 'payment_not_found', `no payment ${paymentId}`);
    if (p.status === 'authorized' && amountMinor > p.amountMinor) return error(422, 'capture_exceeds_authorized', `capture of ${amountMinor} exceeds the ${p.amountMinor} authorized`);
    if (p.status !== 'authorized') return this.bind('capture', key, fingerprint, { status: 409, body: { ...p } });
    p.status = 'succeeded';
    p.capturedMinor = amountMinor;
    this.captures.push({ paymentId, amountMinor });
    return this.bind('capture', key, fingerprint, { status: 200, body: { ...p } });
  }

  /**
   * Ends an authorization's hold: 200 voided (again on one voided already); 409 with the payment
   * once it was captured, or when it already expired (that ends the hold too), or was declined.
   */
  void(key: string, fingerprint: string, paymentId: string): StepAnswer {
    const p = this.current(paymentId);
    if (!p) return error(404, 'payment_not_found', `no payment ${paymentId}`);
    if (p.status === 'authorized') {
      p.status = 'voided';
      this.voids.push({ paymentId });
    }
    return this.bind('void', key, fingerprint, { status: p.status === 'voided' ? 200 : 409, body: { ...p } });
  }

  /** The authorization expires now (a fault: a capture or void that finds it expired). */
  expireNow(paymentId: string): void {
    if (this.expiries.has(paymentId)) this.expiries.set(paymentId, Math.min(this.expiries.get(paymentId)!, this.now()));
  }

  lookupRefund(key: string, fingerprint: string): IdempotencyLookup<Refund> {
    return this.lookup(this.refundKeys, key, fingerprint, (id) => this.refunds.get(id));
  }

  /** Failed refunds are not bound to the key, so the client may retry after fixing the request. */
  refund(key: string, fingerprint: string, paymentId: string, amountMinor: number): RefundResult {
    if (this.refundKeys.has(key)) throw new Error(`refund key already used: ${key}`);
    const payment = this.current(paymentId);
    if (!payment) return { ok: false, reason: 'payment_not_found' };
    if (payment.status !== 'succeeded') return { ok: false, reason: 'payment_declined' };
    if (amountMinor > (payment.capturedMinor ?? payment.amountMinor) - payment.refundedMinor) {
      return { ok: false, reason: 'exceeds_captured' };
    }
    const refund: Refund = { id: this.nextId('re'), paymentId, status: 'succeeded', amountMinor };
    payment.refundedMinor += amountMinor;
    this.refunds.set(refund.id, refund);
    this.refundKeys.set(key, { fingerprint, resultId: refund.id });
    return { ok: true, refund: { ...refund } };
  }

  getPayment(id: string): Payment | undefined {
    return this.view(id);
  }

  paymentsByReference(reference: string): Payment[] {
    return (this.byReference.get(reference) ?? []).map((id) => this.view(id)!);
  }

  snapshot(): LedgerSnapshot {
    return {
      payments: [...this.payments.keys()].map((id) => this.view(id)!),
      refunds: [...this.refunds.values()].map((r) => ({ ...r })),
      captures: this.captures.map((c) => ({ ...c })),
      voids: this.voids.map((v) => ({ ...v })),
      chargeRequests: this.chargeRequests,
      chargeAttempts: this.attempts.map((a) => ({ ...a })),
      authorizeAttempts: this.authorizeAttempts.map((a) => ({ ...a })),
      captureRequests: this.captureRequests,
      voidRequests: this.voidRequests,
    };
  }

  reset(): void {
    for (const m of [this.payments, this.expiries, this.firstAnswers, this.byReference, this.refunds, this.chargeKeys, this.refundKeys, this.stepKeys.capture, this.stepKeys.void]) m.clear();
    this.captures.length = 0;
    this.voids.length = 0;
    this.attempts.length = 0;
    this.authorizeAttempts.length = 0;
    this.chargeRequests = 0;
    this.captureRequests = 0;
    this.voidRequests = 0;
  }

  private record(key: string, fingerprint: string, fields: Omit<Payment, 'id'>): Payment {
    if (this.chargeKeys.has(key)) throw new Error(`charge key already used: ${key}`);
    const payment: Payment = { id: this.nextId('pay'), ...fields };
    this.payments.set(payment.id, payment);
    const ids = this.byReference.get(payment.reference);
    if (ids) ids.push(payment.id);
    else this.byReference.set(payment.reference, [payment.id]);
    this.chargeKeys.set(key, { fingerprint, resultId: payment.id });
    return { ...payment };
  }

  /** The payment as it stands now (an authorization past its expiry turns expired), the book's own object. */
  private current(id: string): Payment | undefined {
    const p = this.payments.get(id);
    if (p?.status === 'authorized' && this.now() >= this.expiries.get(id)!) p.status = 'expired';
    return p;
  }

  private view(id: string): Payment | undefined {
    const p = this.current(id);
    return p ? { ...p } : undefined;
  }

  private bind(kind: 'capture' | 'void', key: string, fingerprint: string, answer: StepAnswer): StepAnswer {
    this.stepKeys[kind].set(key, { fingerprint, answer: structuredClone(answer) });
    return answer;
  }

  private lookup<T extends object>(
    keys: Map<string, KeyRecord>,
    key: string,
    fingerprint: string,
    find: (id: string) => T | undefined,
  ): IdempotencyLookup<T> {
    const record = keys.get(key);
    if (!record) return { kind: 'new' };
    if (record.fingerprint !== fingerprint) return { kind: 'conflict' };
    const value = find(record.resultId);
    // Records are only ever written together with their result, so this cannot miss.
    if (!value) throw new Error(`idempotency record ${key} points at missing ${record.resultId}`);
    return { kind: 'replay', value: { ...value } };
  }
}
