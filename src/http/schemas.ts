import { Static, Type } from '@sinclair/typebox';
import { AppError } from '../common/errors.js';

/**
 * Shared pieces of the request and response schemas: validation (http/validation.ts) and the
 * OpenAPI document use these same objects.
 */
export const SKU_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,255}$/;
export const NAME_PATTERN = SKU_PATTERN;

export const SkuString = Type.String({ pattern: SKU_PATTERN.source, 'x-message': 'sku must be 1-64 characters of [A-Za-z0-9_.:-]', example: 'SKU-1' });

export const Line = Type.Object(
  {
    sku: SkuString,
    quantity: Type.Integer({ minimum: 1, maximum: 1000, 'x-message': 'quantity must be an integer from 1 to 1000', example: 2 }),
  },
  { additionalProperties: false },
);

export const LOCATION_ID_PATTERN = SKU_PATTERN;

/** A Try's `locationIds`: the locations that may serve it (click and collect, ship from a store). */
export const LocationIds = Type.Array(
  Type.String({ pattern: LOCATION_ID_PATTERN.source, 'x-message': 'each location id must be 1-64 characters of [A-Za-z0-9_.:-]' }),
  { minItems: 1, maxItems: 20, uniqueItems: true, 'x-message': 'locationIds must hold 1-20 distinct location ids', description: 'only these locations may serve the order' },
);

export const Lines = Type.Array(Line, { minItems: 1, maxItems: 50, 'x-message': 'items must hold 1-50 lines', description: 'each SKU at most once' });

/**
 * The body of a route that takes none: absent or `{}`. Anything else — an array, a string, a field
 * (`__proto__` included) — is refused like an unknown field on any other route, before the route acts.
 */
export const NoBody = Type.Object({}, { additionalProperties: false, description: 'no body, or {}' });
export type NoBody = Static<typeof NoBody>;

/**
 * What a person's name and a `reason` refuse (API.md, "Errors"): control characters (U+0000-U+001F,
 * U+007F-U+009F: CR/LF, terminal escapes), the line and paragraph separators, bidirectional
 * controls (U+202A-U+202E, U+2066-U+2069) and zero-width characters (U+200B-U+200F, U+FEFF). They
 * would go into the timeline and the ledger as they are, and show there (in the console, a log, a
 * terminal) as something other than what was typed: a name that reads like another's, text that
 * rewrites the line it is on.
 */
const HIDDEN_CHARACTERS = '\\u0000-\\u001F\\u007F-\\u009F\\u200B-\\u200F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069\\uFEFF';
export const PLAIN_TEXT_PATTERN = new RegExp(`^[^${HIDDEN_CHARACTERS}]*$`, 'u');

/** Free text a person writes that is recorded as written: 1-`max` characters, none of them hidden. */
function plainText(field: string, max: number, description?: string) {
  return Type.String({
    minLength: 1,
    maxLength: max,
    pattern: PLAIN_TEXT_PATTERN.source,
    'x-message': `${field} must be 1-${max} characters, without control, bidirectional or zero-width characters`,
    ...(description ? { description } : {}),
  });
}

/** A name of a person (the console's "Your name", an operator's name). */
export const PersonName = (description?: string) => plainText('name', 100, description);

/** An operator's `reason` for an action (force actions, acknowledge, bulk cancel, repair). */
export const ReasonText = plainText('reason', 500);

export const Reason = Type.Object({ reason: ReasonText }, { additionalProperties: false });

/** Query integers arrive as text: digits only, range checked by the caller's pattern. */
export const intText = (pattern: RegExp, message: string) => Type.String({ pattern: pattern.source, 'x-message': message });

/**
 * The rule `Lines` cannot state: each SKU at most once (JSON Schema's uniqueItems compares whole
 * lines). VALIDATION_FAILED naming the first repeat, for an order's Try and a participant's alike.
 */
export function requireDistinctSkus(items: { sku: string }[]): void {
  const seen = new Set<string>();
  for (const { sku } of items) {
    if (seen.has(sku)) throw AppError.validation([{ field: 'items', message: `each SKU may appear at most once; ${sku} repeats` }]);
    seen.add(sku);
  }
}

/** Who did it (API.md, "Who did it"): `id` and `name` are null for root and system. */
export const PrincipalView = Type.Object({
  type: Type.String({ enum: ['root', 'api_key', 'operator', 'system'] }),
  id: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
});
