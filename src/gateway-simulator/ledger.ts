import { randomUUID } from 'node:crypto';

// In-memory books of the simulated gateway. No I/O and no timers: the server
// decides when to answer, the ledger only decides what happened.

export type PaymentStatus = 'succeeded' | 'declined';

export interface Payment {
  id: string;
  status: PaymentStatus;
  amountMinor: number;
  currency: string;
  reference: string;
  refundedMinor: number;
}

export interface Refund {
  id: string;
  paymentId: string;
  status: 'succeeded';
  amountMinor: number;
}

/** One POST /payments as the gateway received it: what a test needs to see which token was charged. */
export interface ChargeAttempt {
  reference: string;
  paymentToken: string | null;
}

export interface LedgerSnapshot {
  payments: Payment[];
  refunds: Refund[];
  chargeRequests: number;
  chargeAttempts: ChargeAttempt[];
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

interface KeyRecord {
  fingerprint: string;
  resultId: string;
}

export type IdGenerator = (prefix: 'pay' | 're') => string;

const defaultIds: IdGenerator = (prefix) => `${prefix}_${randomUUID().replaceAll('-', '')}`;

export class Ledger {
  private readonly payments = new Map<string, Payment>();
  /** Payment ids by reference, in the order they were made: a lookup reads its own, not the whole book. */
  private readonly byReference = new Map<string, string[]>();
  private readonly refunds = new Map<string, Refund>();
  // Charges and refunds have separate key spaces, as with real gateways'
  // per-endpoint idempotency, so a client reusing an order id as both keys is safe.
  private readonly chargeKeys = new Map<string, KeyRecord>();
  private readonly refundKeys = new Map<string, KeyRecord>();
  private chargeRequests = 0;
  private readonly attempts: ChargeAttempt[] = [];

  constructor(private readonly nextId: IdGenerator = defaultIds) {}

  /** Counts every POST /payments that reached the ledger, replays included, and logs its reference and token. */
  countChargeRequest(attempt?: { reference: string; paymentToken?: string }): void {
    this.chargeRequests += 1;
    if (attempt) this.attempts.push({ reference: attempt.reference, paymentToken: attempt.paymentToken ?? null });
  }

  lookupCharge(key: string, fingerprint: string): IdempotencyLookup<Payment> {
    return this.lookup(this.chargeKeys, key, fingerprint, (id) => this.payments.get(id));
  }

  /** Records a payment (succeeded or declined) and binds it to the key. */
  charge(key: string, fingerprint: string, input: ChargeInput, status: PaymentStatus): Payment {
    if (this.chargeKeys.has(key)) throw new Error(`charge key already used: ${key}`);
    const payment: Payment = {
      id: this.nextId('pay'),
      status,
      amountMinor: input.amountMinor,
      currency: input.currency,
      reference: input.reference,
      refundedMinor: 0,
    };
    this.payments.set(payment.id, payment);
    const ids = this.byReference.get(payment.reference);
    if (ids) ids.push(payment.id);
    else this.byReference.set(payment.reference, [payment.id]);
    this.chargeKeys.set(key, { fingerprint, resultId: payment.id });
    return { ...payment };
  }

  lookupRefund(key: string, fingerprint: string): IdempotencyLookup<Refund> {
    return this.lookup(this.refundKeys, key, fingerprint, (id) => this.refunds.get(id));
  }

  /** Failed refunds are not bound to the key, so the client may retry after fixing the request. */
  refund(key: string, fingerprint: string, paymentId: string, amountMinor: number): RefundResult {
    if (this.refundKeys.has(key)) throw new Error(`refund key already used: ${key}`);
    const payment = this.payments.get(paymentId);
    if (!payment) return { ok: false, reason: 'payment_not_found' };
    if (payment.status !== 'succeeded') return { ok: false, reason: 'payment_declined' };
    if (amountMinor > payment.amountMinor - payment.refundedMinor) {
      return { ok: false, reason: 'exceeds_captured' };
    }
    const refund: Refund = { id: this.nextId('re'), paymentId, status: 'succeeded', amountMinor };
    payment.refundedMinor += amountMinor;
    this.refunds.set(refund.id, refund);
    this.refundKeys.set(key, { fingerprint, resultId: refund.id });
    return { ok: true, refund: { ...refund } };
  }

  getPayment(id: string): Payment | undefined {
    const payment = this.payments.get(id);
    return payment ? { ...payment } : undefined;
  }

  paymentsByReference(reference: string): Payment[] {
    return (this.byReference.get(reference) ?? []).map((id) => ({ ...this.payments.get(id)! }));
  }

  snapshot(): LedgerSnapshot {
    return {
      payments: [...this.payments.values()].map((p) => ({ ...p })),
      refunds: [...this.refunds.values()].map((r) => ({ ...r })),
      chargeRequests: this.chargeRequests,
      chargeAttempts: this.attempts.map((a) => ({ ...a })),
    };
  }

  reset(): void {
    this.payments.clear();
    this.byReference.clear();
    this.refunds.clear();
    this.chargeKeys.clear();
    this.refundKeys.clear();
    this.chargeRequests = 0;
    this.attempts.length = 0;
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
