import { Static, Type } from '@sinclair/typebox';
import { Lines, LocationIds } from '../http/schemas.js';
import { ORDER_STATUSES, PAYMENT_STATUSES } from './state/order-state.js';

export const CreateOrderBody = Type.Object(
  {
    customerId: Type.String({ minLength: 1, maxLength: 128, 'x-message': 'customerId must be a string of 1-128 characters', example: 'c-1' }),
    items: Lines,
    locationIds: Type.Optional(LocationIds),
    payment: Type.Optional(
      Type.Object(
        {
          paymentToken: Type.String({ minLength: 1, maxLength: 255, 'x-message': 'payment.paymentToken must be a string of 1-255 characters', description: 'passed to the gateway' }),
        },
        { additionalProperties: false, description: 'hold the payment with the stock: the order amount is authorized at Try, captured at Confirm, voided on release' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateOrderBody = Static<typeof CreateOrderBody>;

export const ConfirmBody = Type.Object(
  { paymentToken: Type.Optional(Type.String({ minLength: 1, maxLength: 512, 'x-message': 'paymentToken must be a string of 1-512 characters', description: 'passed to the gateway' })) },
  { additionalProperties: false },
);
export type ConfirmBody = Static<typeof ConfirmBody>;

export const ExtendBody = Type.Object(
  { extendByMs: Type.Integer({ minimum: 1000, maximum: 3_600_000, 'x-message': 'extendByMs must be an integer from 1000 to 3600000' }) },
  { additionalProperties: false },
);
export type ExtendBody = Static<typeof ExtendBody>;

export const Allocation = Type.Object({ locationId: Type.String(), quantity: Type.Integer() });

export const OrderItem = Type.Object({
  sku: Type.String(),
  quantity: Type.Integer(),
  unitPriceMinor: Type.Integer(),
  allocations: Type.Array(Allocation, { description: 'where the line is reserved, in the order the locations were taken' }),
});

/** The contract's order JSON (built by Postgres: tcc_order_json). */
export const Order = Type.Object({
  id: Type.String({ format: 'uuid' }),
  transactionId: Type.String(),
  customerId: Type.String(),
  status: Type.Union(ORDER_STATUSES.map((s) => Type.Literal(s))),
  items: Type.Array(OrderItem),
  amountMinor: Type.Integer(),
  currency: Type.String({ example: 'USD' }),
  reservationExpiresAt: Type.String({ format: 'date-time' }),
  confirmAttempts: Type.Integer(),
  paymentId: Type.Union([Type.String(), Type.Null()]),
  failureReason: Type.Union([Type.String(), Type.Null()]),
  payment: Type.Union([
    Type.Object(
      {
        status: Type.Union(PAYMENT_STATUSES.map((s) => Type.Literal(s))),
        paymentId: Type.Union([Type.String(), Type.Null()]),
        authorizedMinor: Type.Union([Type.Integer(), Type.Null()]),
        capturedMinor: Type.Integer(),
        authorizationExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      },
      { description: 'the payment held at Try' },
    ),
    Type.Null({ description: 'paid at Confirm' }),
  ]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
