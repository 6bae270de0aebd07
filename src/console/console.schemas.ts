import { Static, Type } from '@sinclair/typebox';
import { ROLES, SCOPES } from '../access/scopes.js';
import { PersonName, PrincipalView } from '../http/schemas.js';
import { ORDER_STATUSES } from '../orders/state/order-state.js';

/** Either the admin token (with an optional name), or an operator's email and password. */
export const SignInBody = Type.Object(
  {
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, 'x-message': 'token must be 1-4096 characters' })),
    name: Type.Optional(PersonName('Your name (with the admin token): recorded as `operator` with every change made while signed in')),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, 'x-message': 'email must be 1-254 characters' })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 200, 'x-message': 'password must be 1-200 characters' })),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

export const ConsoleSessionView = Type.Object({
  csrfToken: Type.String({ description: 'Send it as X-CSRF-Token on every state change made with the session cookie' }),
  expiresAt: Type.String({ format: 'date-time' }),
  operator: Type.Union([Type.String(), Type.Null()], { description: "The signed-in operator's name (with the admin token: the name given at sign-in, or null)" }),
  role: Type.Union([Type.String({ enum: [...ROLES] }), Type.Null()], { description: "The operator's role; null when signed in with the admin token (every right)" }),
  scopes: Type.Array(Type.String({ enum: [...SCOPES] }), { description: 'What the session may do' }),
  principal: PrincipalView,
});

export const ConsoleStats = Type.Object({
  ordersByStatus: Type.Object(Object.fromEntries(ORDER_STATUSES.map((s) => [s, Type.Integer()]))),
  needingAttention: Type.Integer(),
  breaker: Type.Union([Type.Literal('closed'), Type.Literal('half_open'), Type.Literal('open')], { description: "This process's payment-gateway circuit breaker" }),
});
