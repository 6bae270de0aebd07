import { Static, Type } from '@sinclair/typebox';
import { intText } from '../http/schemas.js';
import type { OrderEventType } from '../orders/state/moves.js';

/**
 * The contract's event types (API.md "Webhooks"): the order events (the compiler checks the list
 * against the moves' type) and inventory.low_stock, whose data is an inventory, not an order.
 */
export const WEBHOOK_EVENTS = [
  'order.reserved',
  'order.pending',
  'order.confirmed',
  'order.payment_failed',
  'order.canceled',
  'order.needs_attention',
  'refund.succeeded',
  'inventory.low_stock',
] as const satisfies readonly (OrderEventType | 'inventory.low_stock')[];
type Missing = Exclude<OrderEventType, (typeof WEBHOOK_EVENTS)[number]>;
const everyEventListed: [Missing] extends [never] ? true : Missing = true;
void everyEventListed;

import { DELIVERY_STATUSES } from './delivery-state.js';
export { DELIVERY_STATUSES, type DeliveryStatus } from './delivery-state.js';

export const PutWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, 'x-message': 'url must be an http or https URL of at most 2048 characters', example: 'https://example.com/hooks/tcc' }),
    events: Type.Array(Type.String({ enum: [...WEBHOOK_EVENTS], 'x-message': `each event must be one of ${WEBHOOK_EVENTS.join(', ')}` }), {
      minItems: 1,
      maxItems: WEBHOOK_EVENTS.length,
      uniqueItems: true,
      'x-message': 'events must list 1 or more event types, each at most once',
    }),
    secret: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'whsec_ followed by the base64 of 24-64 random bytes (Standard Webhooks); never shown again',
      'x-message': 'secret must be whsec_ followed by the base64 of 24-64 random bytes',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
  },
  { additionalProperties: false },
);
export type PutWebhookBody = Static<typeof PutWebhookBody>;

export const WebhookView = Type.Object({ name: Type.String(), url: Type.String(), events: Type.Array(Type.String({ enum: [...WEBHOOK_EVENTS] })) });
export type WebhookView = Static<typeof WebhookView>;

/** The endpoint's most recent failed attempt, as recorded when it failed. */
export const LastFailure = Type.Object({
  at: Type.String({ format: 'date-time' }),
  deliveryId: Type.String({ format: 'uuid' }),
  error: Type.String({ description: 'what the attempt met: "HTTP 500", "no answer within 5000 ms", "request failed: ECONNREFUSED"' }),
  httpStatus: Type.Union([Type.Integer(), Type.Null()], { description: "the receiver's HTTP status, when it answered" }),
  body: Type.Union([Type.String(), Type.Null()], { description: "the first 200 characters of the receiver's answer, on one line" }),
});

/** GET /admin/webhooks: each endpoint with how its deliveries are going. */
export const WebhookOverview = Type.Composite([
  WebhookView,
  Type.Object({
    lastHour: Type.Object(
      { delivered: Type.Integer(), failed: Type.Integer() },
      { description: 'deliveries whose latest attempt was in the last hour: delivered, or failed (retried or not)' },
    ),
    failedDeliveries: Type.Integer({ description: 'deliveries failed now (every attempt used): what "Resend failed" sends again' }),
    lastFailure: Type.Union([LastFailure, Type.Null()]),
  }),
]);
export type WebhookOverview = Static<typeof WebhookOverview>;
export const WebhookList = Type.Object({ data: Type.Array(WebhookOverview) });
export const ResendFailedResult = Type.Object({ resent: Type.Integer({ description: 'failed deliveries now pending again, due now' }) });

export const DeliveriesQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ enum: [...DELIVERY_STATUSES], 'x-message': `status must be one of ${DELIVERY_STATUSES.join(', ')}` })),
    limit: Type.Optional(intText(/^(?:[1-9]\d{0,2}|1000)$/, 'limit must be an integer from 1 to 1000')),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'nextCursor of the previous page' })),
  },
  { additionalProperties: false },
);
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;

export const DeliveryView = Type.Object({
  id: Type.String({ format: 'uuid', description: 'the webhook-id header, the same on every attempt' }),
  type: Type.String({ enum: [...WEBHOOK_EVENTS] }),
  orderId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  status: Type.String({ enum: [...DELIVERY_STATUSES] }),
  attempts: Type.Integer({ description: 'attempts made in the current round (a retried failed or delivered delivery starts at 0)' }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'what the most recent failed attempt met (kept after a later success)' }),
  lastStatus: Type.Union([Type.Integer(), Type.Null()], { description: "that attempt's HTTP status, when the receiver answered" }),
  lastResponse: Type.Union([Type.String(), Type.Null()], { description: "the first 200 characters of that answer's body" }),
  createdAt: Type.String({ format: 'date-time' }),
});
export type DeliveryView = Static<typeof DeliveryView>;
export const DeliveryPage = Type.Object({ data: Type.Array(DeliveryView), nextCursor: Type.Union([Type.String(), Type.Null()]) });
