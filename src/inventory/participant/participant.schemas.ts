import { Static, Type } from '@sinclair/typebox';
import { intText, Lines, LocationIds } from '../../http/schemas.js';

const TX_ID = { pattern: '^[A-Za-z0-9_.:-]{1,128}$', 'x-message': 'transactionId must be 1-128 characters of [A-Za-z0-9_.:-]' };

/** DTM sends one body to every phase: Confirm and Cancel accept (and ignore) the Try's fields. */
export const TccTryBody = Type.Object(
  {
    transactionId: Type.String(TX_ID),
    items: Lines,
    timeoutMs: Type.Optional(
      Type.Integer({ minimum: 1000, 'x-message': 'timeoutMs must be an integer from 1000 to RESERVATION_MAX_TTL_MS', description: 'the branch is canceled by the service after this long (default PARTICIPANT_TTL_MS)' }),
    ),
    locationIds: Type.Optional(LocationIds),
  },
  { additionalProperties: false },
);
export type TccTryBody = Static<typeof TccTryBody>;

export const TccPhaseBody = Type.Object(
  {
    transactionId: Type.String(TX_ID),
    items: Type.Optional(Lines),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1000 })),
    locationIds: Type.Optional(LocationIds),
  },
  { additionalProperties: false },
);
export type TccPhaseBody = Static<typeof TccPhaseBody>;

export const TccStatus = Type.Object({ status: Type.Union([Type.Literal('RESERVED'), Type.Literal('CONFIRMED'), Type.Literal('CANCELED')]) });

export const BranchList = Type.Object({
  data: Type.Array(
    Type.Object({
      transactionId: Type.String(),
      status: Type.Union([Type.Literal('RESERVED'), Type.Literal('CONFIRMED'), Type.Literal('CANCELED')]),
      items: Type.Array(
        Type.Object({
          sku: Type.String(),
          quantity: Type.Integer(),
          allocations: Type.Array(Type.Object({ locationId: Type.String(), quantity: Type.Integer() })),
        }),
      ),
      createdAt: Type.String({ format: 'date-time' }),
      expiresAt: Type.String({ format: 'date-time' }),
    }),
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

/** The operators' list of branches (GET /admin/participant/transactions). */
export const BranchQuery = Type.Object(
  {
    status: Type.Optional(Type.String({ enum: ['RESERVED', 'CONFIRMED', 'CANCELED'], 'x-message': 'status must be RESERVED, CONFIRMED or CANCELED' })),
    olderThanMinutes: Type.Optional(intText(/^(?:0|[1-9]\d{0,6})$/, 'olderThanMinutes must be an integer from 0 to 9999999')),
    limit: Type.Optional(intText(/^(?:[1-9]\d{0,2}|1000)$/, 'limit must be an integer from 1 to 1000')),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 700, description: 'nextCursor of the previous page' })),
  },
  { additionalProperties: false },
);
export type BranchQuery = Static<typeof BranchQuery>;
