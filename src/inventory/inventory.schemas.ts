import { Static, Type } from '@sinclair/typebox';

export const MAX_PRICE_MINOR = 100_000_000_000;

export const UpsertSkuBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200, 'x-message': 'name must be a string of at most 200 characters' })),
    priceMinor: Type.Integer({ minimum: 0, maximum: MAX_PRICE_MINOR, 'x-message': `priceMinor must be an integer from 0 to ${MAX_PRICE_MINOR}`, example: 1250 }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', 'x-message': 'currency must be an ISO 4217 code (3 upper-case letters)', example: 'USD' }),
    onHand: Type.Integer({ minimum: 0, maximum: 1_000_000_000, 'x-message': 'onHand must be an integer from 0 to 1000000000', example: 100 }),
  },
  { additionalProperties: false },
);
export type UpsertSkuBody = Static<typeof UpsertSkuBody>;

export const InventoryView = Type.Object({
  sku: Type.String(),
  name: Type.String(),
  priceMinor: Type.Integer(),
  currency: Type.String(),
  onHand: Type.Integer(),
  reserved: Type.Integer(),
  available: Type.Integer(),
});
