import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Operators' passwords, kept only as a slow salted hash: scrypt (N = 2^17, r = 8, p = 1: 128 MiB and
 * some hundreds of ms per hash), a 16-byte random salt, stored as `scrypt$N$r$p$salt$hash` (base64url)
 * so the cost can rise later without losing the hashes made before. Run on libuv's thread pool
 * (crypto.scrypt), never blocking the event loop.
 */
const COST = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128 × N × r bytes; maxmem must be above that.
  const maxmem = 128 * cost.N * cost.r + 32 * 1024 * 1024;
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...cost, maxmem }, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string, cost = COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` is the one `stored` was made from (compared in constant time); false for a stored value of another form. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every(Number.isSafeInteger) || N > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(parts[5], 'base64url');
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), { N, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of no one's password, made once: a sign-in with an email nobody has still spends the time
 * of a real check, so the answer's timing does not tell which accounts exist.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(18).toString('base64url'));
  return decoy;
}
