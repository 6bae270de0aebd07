import { Static, Type } from '@sinclair/typebox';
import { ISO_TIME_PATTERN } from '../common/iso-time.js';
import { intText, PersonName, PrincipalView } from '../http/schemas.js';
import { ROLES, SCOPES } from './scopes.js';

const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const time = () => Type.String({ format: 'date-time' });
const limit = intText(/^(?:[1-9]\d{0,2}|1000)$/, 'limit must be an integer from 1 to 1000');
const cursor = Type.String({ minLength: 1, maxLength: 512, description: 'nextCursor of the previous page' });

export const ScopeString = Type.String({ enum: [...SCOPES], 'x-message': `each scope must be one of ${SCOPES.join(', ')}` });
export const RoleString = Type.String({ enum: [...ROLES], 'x-message': `role must be one of ${ROLES.join(', ')}` });

export const PageQuery = Type.Object({ limit: Type.Optional(limit), cursor: Type.Optional(cursor) }, { additionalProperties: false });
export type PageQuery = Static<typeof PageQuery>;

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, 'x-message': 'name must be 1-100 characters' }),
    scopes: Type.Array(ScopeString, { minItems: 1, maxItems: 8, uniqueItems: true, 'x-message': 'scopes must hold 1-8 distinct scopes' }),
    expiresAt: Type.Optional(
      Type.String({ pattern: ISO_TIME_PATTERN, maxLength: 40, 'x-message': 'expiresAt must be an ISO time in the future', description: 'when the key stops working' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

const keyFields = {
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(ScopeString),
  prefix: Type.String({ description: "the key's first 12 characters, to tell keys apart" }),
  createdAt: time(),
  expiresAt: nullable(time()),
  lastUsedAt: nullable(time()),
  revokedAt: nullable(time()),
};
export const ApiKeyView = Type.Object(keyFields);
export const NewApiKeyView = Type.Object({ ...keyFields, key: Type.String({ description: 'The key itself: in this answer only (the service keeps a hash of it)' }) });
export const ApiKeyPage = Type.Object({ data: Type.Array(ApiKeyView), nextCursor: nullable(Type.String()) });

const EMAIL = '^[^\\s@\\u0000-\\u001F\\u007F-\\u009F]+@[^\\s@\\u0000-\\u001F\\u007F-\\u009F]+$';
const email = Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL, 'x-message': 'email must be an email address of at most 254 characters' });
const password = Type.String({ minLength: 12, maxLength: 200, 'x-message': 'password must be 12-200 characters' });

export const CreateOperatorBody = Type.Object({ email, name: PersonName("the operator's name"), role: RoleString, password }, { additionalProperties: false });
export type CreateOperatorBody = Static<typeof CreateOperatorBody>;

export const PatchOperatorBody = Type.Object(
  {
    name: Type.Optional(PersonName("the operator's name")),
    role: Type.Optional(RoleString),
    password: Type.Optional(password),
    disabled: Type.Optional(Type.Boolean({ 'x-message': 'disabled must be true or false' })),
  },
  { additionalProperties: false },
);
export type PatchOperatorBody = Static<typeof PatchOperatorBody>;

export const OperatorView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleString,
  createdAt: time(),
  disabledAt: nullable(time()),
  lastSignInAt: nullable(time()),
});
export const OperatorPage = Type.Object({ data: Type.Array(OperatorView), nextCursor: nullable(Type.String()) });

export const AuditQuery = Type.Object(
  {
    principalId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, 'x-message': 'principalId must be 1-64 characters' })),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 200, 'x-message': 'action must be 1-200 characters' })),
    limit: Type.Optional(limit),
    cursor: Type.Optional(cursor),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

export const AuditEntryView = Type.Object({
  id: Type.String(),
  at: time(),
  principal: Type.Union([PrincipalView, Type.Null()], { description: 'null for a sign-in that opened nothing' }),
  action: Type.String(),
  target: nullable(Type.String()),
  outcome: Type.Integer({ description: 'the HTTP status' }),
  requestId: nullable(Type.String()),
  address: nullable(Type.String()),
});
export const AuditPage = Type.Object({ data: Type.Array(AuditEntryView), nextCursor: nullable(Type.String()) });
