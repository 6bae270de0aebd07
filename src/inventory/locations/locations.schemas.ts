import { Static, Type } from '@sinclair/typebox';

/** PUT /admin/locations/{id} */
export const PutLocationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, 'x-message': 'name must be 1-200 characters', example: 'Store Lyon' }),
    priority: Type.Integer({ minimum: 0, maximum: 1_000_000, 'x-message': 'priority must be an integer from 0 to 1000000', description: 'lower first', example: 10 }),
    active: Type.Boolean({ 'x-message': 'active must be true or false', description: 'an inactive location is allocated nothing new' }),
  },
  { additionalProperties: false },
);
export type PutLocationBody = Static<typeof PutLocationBody>;

export const LocationView = Type.Object({ id: Type.String(), name: Type.String(), priority: Type.Integer(), active: Type.Boolean() });
export type LocationView = Static<typeof LocationView>;

export const LocationList = Type.Object({ data: Type.Array(LocationView) });
