import { Injectable } from '@nestjs/common';
import { GatewayPayment } from '../../payments/gateway.types.js';
import { PaymentGateway } from '../../payments/payment-gateway.js';
import { Note, paymentTo } from '../state/moves.js';
import { callOnlyMove, paymentMove } from '../state/payment-moves.js';
import { PaymentStatus } from '../state/order-state.js';
import { OrderStore } from '../state/order-store.js';

/** The void's key: one per authorization. */
export const voidKey = (paymentId: string) => `void-${paymentId}`;

/** What a round knows of the order's payment when it starts. */
interface PaymentFacts {
  payment_status: PaymentStatus | null;
  payment_id: string | null;
}

/**
 * Ends the holds of released orders whose payment was held at Try (API.md: "release the stock at
 * once and void the authorization … retried until the gateway answers; voiding, then voided"),
 * for the money-back round (refund.service.ts): the void call with its key, and the payment's state
 * as the gateway's answers make it, each by compare-and-set (tcc_apply). A hold found that the order
 * does not know of yet (an authorization that landed after the release) is recorded `voiding`
 * first. A void that finds the hold captured leaves the payment `captured`: the round refunds it.
 */
@Injectable()
export class HoldRelease {
  constructor(
    private readonly store: OrderStore,
    private readonly gateway: PaymentGateway,
  ) {}

  /** Voids an open hold; answers the payment as it now stands, or why the void did not get its answer. */
  async void(id: string, order: PaymentFacts, p: GatewayPayment): Promise<{ ok: true; payment: GatewayPayment } | { ok: false; detail: string }> {
    if (order.payment_status !== 'voiding') {
      await this.store.apply(paymentMove(id, 'an authorization holds money for a released order', { map: paymentTo('voiding'), paymentId: order.payment_id ?? p.id }));
    }
    const outcome = await this.gateway.void(p.id, voidKey(p.id));
    const base = { outcome: outcome.kind, latencyMs: outcome.latencyMs, paymentId: p.id };
    switch (outcome.kind) {
      case 'voided': {
        const to: PaymentStatus = outcome.payment.status === 'expired' ? 'expired' : 'voided';
        const call: Note = { type: 'payment.void', data: { ...base, paymentStatus: outcome.payment.status } };
        await this.store.apply(paymentMove(id, to === 'expired' ? 'the authorization had expired' : 'authorization voided', { from: ['voiding'], map: { voiding: to } }, { call }));
        return { ok: true, payment: outcome.payment };
      }
      case 'captured': {
        const call: Note = { type: 'payment.void', data: { ...base, paymentStatus: outcome.payment.status } };
        await this.store.apply(captured(id, outcome.payment, call));
        return { ok: true, payment: outcome.payment };
      }
      case 'refused':
      case 'unknown': {
        const detail = outcome.kind === 'refused' ? `void refused by the gateway (HTTP ${outcome.status}): ${outcome.detail}` : `void outcome unknown (${outcome.reason}): ${outcome.detail}`;
        await this.store.apply(callOnlyMove(id, { type: 'payment.void', data: { ...base, detail } }));
        return { ok: false, detail };
      }
    }
  }

  /**
   * The order's own authorization found ended (voided or expired — the answer of a void was lost,
   * or it expired by itself), captured (a capture that landed), or declined: recorded.
   */
  async record(id: string, order: PaymentFacts, p: GatewayPayment): Promise<void> {
    if (p.authorizationExpiresAt === undefined || (order.payment_id !== null && order.payment_id !== p.id)) return;
    const from = order.payment_status;
    if (from !== 'voiding' && from !== 'authorizing') return;
    if (p.status === 'succeeded') {
      if (from === 'voiding') await this.store.apply(captured(id, p));
      return;
    }
    const to: PaymentStatus | undefined = p.status === 'voided' ? 'voided' : p.status === 'expired' ? 'expired' : p.status === 'declined' && from === 'authorizing' ? 'declined' : undefined;
    if (to) await this.store.apply(paymentMove(id, `the gateway's authorization is ${p.status}`, { from: [from], map: { [from]: to }, paymentId: order.payment_id ?? p.id }));
  }

  /** The watch is over and no authorization ever turned up for a released order: nothing is held. */
  async noneFound(id: string): Promise<void> {
    await this.store.apply(paymentMove(id, 'no authorization turned up at the gateway', { from: ['authorizing'], map: paymentTo('voided', ['authorizing']) }));
  }
}

function captured(id: string, p: GatewayPayment, call?: Note) {
  return paymentMove(id, 'the hold had been captured; it is refunded instead', { from: ['voiding'], map: { voiding: 'captured' }, capturedMinor: p.capturedMinor }, { call });
}
