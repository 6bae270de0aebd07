/**
 * A UUID in its text form, either case: the one pattern for order ids and webhook event ids. Kept
 * as a regular expression's source, so a route pattern can embed it (http/fast-path.ts).
 */
export const UUID_SOURCE = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

const UUID = new RegExp(`^${UUID_SOURCE}$`);

/** Order ids and event ids are UUIDs; anything else cannot name one (answered 404, never 400 or 500). */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}
