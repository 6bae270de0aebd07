import { Static, Type } from '@sinclair/typebox';
import { DEFAULT_LOCATION } from './locations/default-location.js';

export const MAX_PRICE_MINOR = 100_000_000_000;

const STOCK = { minimum: 0, maximum: 1_000_000_000 };

export const LowStockThreshold = Type.Integer({ ...STOCK, 'x-message': 'lowStockThreshold must be an integer from 0 to 1000000000', description: '0: off' });

export const UpsertSkuBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200, 'x-message': 'name must be a string of at most 200 characters' })),
    priceMinor: Type.Integer({ minimum: 0, maximum: MAX_PRICE_MINOR, 'x-message': `priceMinor must be an integer from 0 to ${MAX_PRICE_MINOR}`, example: 1250 }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', 'x-message': 'currency must be an ISO 4217 code (3 upper-case letters)', example: 'USD' }),
    onHand: Type.Integer({ minimum: 0, maximum: 1_000_000_000, 'x-message': 'onHand must be an integer from 0 to 1000000000', example: 100, description: `the stock of the location ${DEFAULT_LOCATION}` }),
    lowStockThreshold: Type.Optional(LowStockThreshold),
  },
  { additionalProperties: false },
);
export type UpsertSkuBody = Static<typeof UpsertSkuBody>;

/** PUT /admin/inventory/{sku}/locations/{locationId} */
export const SetStockBody = Type.Object(
  {
    onHand: Type.Integer({ ...STOCK, 'x-message': 'onHand must be an integer from 0 to 1000000000', example: 40 }),
    safetyStock: Type.Optional(Type.Integer({ ...STOCK, 'x-message': 'safetyStock must be an integer from 0 to 1000000000', description: 'never allocated; a missing one keeps today\'s (0 for a new row)' })),
    expectedOnHand: Type.Optional(
      Type.Integer({ ...STOCK, 'x-message': 'expectedOnHand must be an integer from 0 to 1000000000', description: 'compare-and-set: set only while onHand still equals this, else 409 STOCK_CHANGED' }),
    ),
  },
  { additionalProperties: false },
);
export type SetStockBody = Static<typeof SetStockBody>;

export const LocationStockView = Type.Object({
  locationId: Type.String(),
  onHand: Type.Integer(),
  reserved: Type.Integer(),
  safetyStock: Type.Integer(),
  available: Type.Integer({ description: 'max(0, onHand - reserved - safetyStock); 0 when the location is inactive' }),
  active: Type.Boolean(),
});

export const InventoryView = Type.Object({
  sku: Type.String(),
  name: Type.String(),
  priceMinor: Type.Integer(),
  currency: Type.String(),
  onHand: Type.Integer({ description: 'the sum over its locations' }),
  reserved: Type.Integer(),
  safetyStock: Type.Integer(),
  available: Type.Integer(),
  lowStockThreshold: Type.Integer(),
  locations: Type.Array(LocationStockView),
});
