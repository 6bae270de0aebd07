import { Static, Type } from '@sinclair/typebox';
import { intText, LOCATION_ID_PATTERN, PrincipalView } from '../../http/schemas.js';
import { InventoryView } from '../inventory.schemas.js';
import { DEFAULT_LOCATION } from '../locations/default-location.js';

export const MOVEMENT_KINDS = ['set', 'adjustment', 'sale', 'import', 'repair'] as const;
export const ADJUSTMENT_REASONS = ['received', 'returned', 'damaged', 'lost', 'correction', 'cycle_count'] as const;

const locationId = Type.String({ pattern: LOCATION_ID_PATTERN.source, 'x-message': 'locationId must be 1-64 characters of [A-Za-z0-9_.:-]' });

/** A page size as every paged list of the API takes it: 1-1000. */
export const Limit = intText(/^(?:[1-9]\d{0,2}|1000)$/, 'limit must be an integer from 1 to 1000');
export const Cursor = Type.String({ minLength: 1, maxLength: 512, description: 'nextCursor of the previous page' });

/** GET /admin/inventory/{sku}/movements */
export const MovementsQuery = Type.Object(
  {
    locationId: Type.Optional(locationId),
    kind: Type.Optional(Type.String({ enum: [...MOVEMENT_KINDS], 'x-message': `kind must be one of ${MOVEMENT_KINDS.join(', ')}` })),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type MovementsQuery = Static<typeof MovementsQuery>;

/** POST /admin/inventory/{sku}/adjustments */
export const AdjustmentBody = Type.Object(
  {
    locationId: Type.Optional({ ...locationId, description: `default "${DEFAULT_LOCATION}"` }),
    delta: Type.Integer({
      minimum: -1_000_000_000,
      maximum: 1_000_000_000,
      not: { const: 0 },
      'x-message': 'delta must be an integer from -1000000000 to 1000000000, not 0',
      example: 12,
    }),
    reason: Type.String({ enum: [...ADJUSTMENT_REASONS], 'x-message': `reason must be one of ${ADJUSTMENT_REASONS.join(', ')}` }),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200, 'x-message': 'reference must be 1-200 characters', example: 'PO-1042' })),
  },
  { additionalProperties: false },
);
export type AdjustmentBody = Static<typeof AdjustmentBody>;

export const MovementView = Type.Object({
  id: Type.String({ description: 'increasing in the order movements were written' }),
  at: Type.String({ format: 'date-time' }),
  sku: Type.String(),
  locationId: Type.String(),
  kind: Type.String({ enum: [...MOVEMENT_KINDS] }),
  delta: Type.Integer(),
  onHandAfter: Type.Integer(),
  reason: Type.Union([Type.String(), Type.Null()]),
  reference: Type.Union([Type.String(), Type.Null()]),
  actor: Type.String({ enum: ['admin', 'console', 'system'] }),
  operator: Type.Union([Type.String(), Type.Null()], { description: "the signed-in operator's name (for the root token at the console, the name given at sign-in)" }),
  principal: PrincipalView,
});
export type MovementView = Static<typeof MovementView>;

export const MovementPage = Type.Object({ data: Type.Array(MovementView), nextCursor: Type.Union([Type.String(), Type.Null()]) });
export const AdjustmentResult = Type.Object({ movement: MovementView, inventory: InventoryView });
