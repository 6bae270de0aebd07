import { Static, Type } from '@sinclair/typebox';
import { intText, PrincipalView, ReasonText, SKU_PATTERN } from '../http/schemas.js';
import { ORDER_STATUSES } from '../orders/state/order-state.js';
import { Order } from '../orders/orders.schemas.js';
import { REFUND_STATUSES } from '../orders/state/refund-state.js';

const status = Type.String({ enum: [...ORDER_STATUSES], 'x-message': `status must be one of ${ORDER_STATUSES.join(', ')}` });
const olderThan = intText(/^(?:0|[1-9]\d{0,6})$/, 'olderThanMinutes must be an integer from 0 to 9999999');
const customerId = Type.String({ minLength: 1, maxLength: 128, 'x-message': 'customerId must be 1-128 characters' });
const sku = Type.String({ pattern: SKU_PATTERN.source, 'x-message': 'sku must be 1-64 characters of [A-Za-z0-9_.:-]' });

/** The filters the list and its counts share. */
const orderFilters = {
  status: Type.Optional(status),
  needsAttention: Type.Optional(Type.String({ enum: ['true', 'false'], 'x-message': 'needsAttention must be true or false' })),
  olderThanMinutes: Type.Optional(olderThan),
  customerId: Type.Optional(customerId),
  sku: Type.Optional(sku),
  idPrefix: Type.Optional(
    Type.String({ pattern: '^[0-9a-fA-F-]{8,36}$', 'x-message': 'idPrefix must be the first 8-36 characters of an order id', description: 'orders whose id starts so' }),
  ),
};

export const ORDER_SORTS = ['oldest', 'newest'] as const;

export const ListOrdersQuery = Type.Object(
  {
    ...orderFilters,
    sort: Type.Optional(Type.String({ enum: [...ORDER_SORTS], 'x-message': 'sort must be oldest or newest', description: 'oldest (the default) or newest first' })),
    limit: Type.Optional(intText(/^(?:[1-9]\d{0,2}|1000)$/, 'limit must be an integer from 1 to 1000')),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'nextCursor of the previous page' })),
  },
  { additionalProperties: false },
);
export type ListOrdersQuery = Static<typeof ListOrdersQuery>;

export const OrderCountsQuery = Type.Object(orderFilters, { additionalProperties: false });
export type OrderCountsQuery = Static<typeof OrderCountsQuery>;

export const OrderCounts = Type.Object({
  total: Type.Integer({ description: 'Orders every filter matches' }),
  byStatus: Type.Object(Object.fromEntries(ORDER_STATUSES.map((s) => [s, Type.Integer()])), {
    description: 'For each status, the orders the other filters match (status itself aside)',
  }),
});

export const GatewayPayments = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      status: Type.Union([Type.Literal('succeeded'), Type.Literal('declined')]),
      amountMinor: Type.Integer({ description: 'Captured when status is succeeded' }),
      currency: Type.String(),
      reference: Type.String(),
      refundedMinor: Type.Integer(),
    }),
  ),
});

export const BulkCancelBody = Type.Object(
  {
    filter: Type.Object(
      {
        status: Type.Optional(status),
        olderThanMinutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 9_999_999, 'x-message': 'olderThanMinutes must be an integer from 0 to 9999999' })),
        sku: Type.Optional(sku),
        customerId: Type.Optional(customerId),
      },
      { additionalProperties: false },
    ),
    reason: ReasonText,
    dryRun: Type.Boolean({ 'x-message': 'dryRun must be true or false' }),
  },
  { additionalProperties: false },
);
export type BulkCancelBody = Static<typeof BulkCancelBody>;

export const ReconciliationQuery = Type.Object(
  { sinceMinutes: Type.Optional(intText(/^(?:[1-9]\d{0,3}|[1-3]\d{4}|4[0-2]\d{3}|43200)$/, 'sinceMinutes must be an integer from 1 to 43200')) },
  { additionalProperties: false },
);
export const ReconciliationBody = Type.Object(
  { sinceMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 43_200, 'x-message': 'sinceMinutes must be an integer from 1 to 43200' })) },
  { additionalProperties: false },
);

export const LastOutcome = Type.Object({
  step: Type.Union([Type.Literal('charge'), Type.Literal('lookup')]),
  reason: Type.Union([Type.Literal('timeout'), Type.Literal('error'), Type.Literal('unreachable'), Type.Literal('circuit_open')]),
  httpStatus: Type.Union([Type.Integer(), Type.Null()], { description: "the gateway's HTTP status, when it answered one" }),
  text: Type.String({ description: 'in words: "gateway timed out", "gateway error 503", "breaker open", "lookup failed: …"' }),
  at: Type.String({ format: 'date-time' }),
});

export const AdminOrder = Type.Composite([
  Order,
  Type.Object({
    nextActionAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    refundStatus: Type.Union([...REFUND_STATUSES.map((s) => Type.Literal(s)), Type.Null()]),
    needsAttention: Type.Boolean(),
    lastOutcome: Type.Union([LastOutcome, Type.Null()], { description: 'a CONFIRM_PENDING order: why it waits (its last gateway call); null otherwise' }),
  }),
]);

export const OrderPage = Type.Object({ data: Type.Array(AdminOrder), nextCursor: Type.Union([Type.String(), Type.Null()]) });
export const Timeline = Type.Object({
  data: Type.Array(
    Type.Object({
      type: Type.String(),
      at: Type.String({ format: 'date-time' }),
      data: Type.Record(Type.String(), Type.Unknown()),
      principal: Type.Optional(PrincipalView),
    }),
  ),
});
export const BulkCancelResult = Type.Object({ matched: Type.Integer(), canceled: Type.Array(Type.String()) });
export const ReconciliationReport = Type.Object({
  checked: Type.Integer(),
  mismatches: Type.Array(Type.Object({ orderId: Type.String(), kind: Type.String(), detail: Type.String() })),
  truncated: Type.Boolean(),
  unreachable: Type.Array(Type.String()),
});
