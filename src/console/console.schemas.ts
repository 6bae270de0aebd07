import { Static, Type } from '@sinclair/typebox';
import { ORDER_STATUSES } from '../orders/state/order-state.js';

export const SignInBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 4096, 'x-message': 'token must be 1-4096 characters' }),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, 'x-message': 'name must be 1-100 characters', description: 'Your name: recorded as `operator` with every change made while signed in' }),
    ),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

export const ConsoleSessionView = Type.Object({
  csrfToken: Type.String({ description: 'Send it as X-CSRF-Token on every state change made with the session cookie' }),
  expiresAt: Type.String({ format: 'date-time' }),
  operator: Type.Union([Type.String(), Type.Null()], { description: 'The name given at sign-in, or null' }),
});

export const ConsoleStats = Type.Object({
  ordersByStatus: Type.Object(Object.fromEntries(ORDER_STATUSES.map((s) => [s, Type.Integer()]))),
  needingAttention: Type.Integer(),
  breaker: Type.Union([Type.Literal('closed'), Type.Literal('half_open'), Type.Literal('open')], { description: "This process's payment-gateway circuit breaker" }),
});
