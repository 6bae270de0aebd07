/** Standard Webhooks signing secrets: `whsec_` + base64 of the HMAC key. */
export const SECRET_PREFIX = 'whsec_';
export const SECRET_MIN_BYTES = 24;
export const SECRET_MAX_BYTES = 64;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Why a secret is refused, or undefined when it is a key every Standard Webhooks library decodes
 * to the same bytes: canonical, padded standard base64 (Node's decoder would quietly skip stray
 * characters, a receiver's library may not), 24-64 bytes. The message never quotes the secret.
 */
export function secretProblem(secret: string): string | undefined {
  const expected = `secret must be ${SECRET_PREFIX} followed by the base64 of ${SECRET_MIN_BYTES}-${SECRET_MAX_BYTES} random bytes`;
  if (!secret.startsWith(SECRET_PREFIX)) return expected;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return expected;
  const key = Buffer.from(encoded, 'base64');
  if (key.toString('base64') !== encoded) return expected;
  if (key.length < SECRET_MIN_BYTES || key.length > SECRET_MAX_BYTES) return `${expected}; this one decodes to ${key.length} bytes`;
  return undefined;
}
