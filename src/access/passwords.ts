import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Operators' passwords, kept only as a slow salted hash: scrypt (N = 2^17 by default, r = 8, p = 1:
 * 128 MiB and most of a CPU-second per hash), a 16-byte random salt, stored as
 * `scrypt$N$r$p$salt$hash` (base64url) so the cost can change later without losing the hashes made
 * before: each is checked at its own. Run on libuv's thread pool (crypto.scrypt), never blocking the
 * event loop. The cost of new hashes is PASSWORD_HASH_COST (log2 N; the tests lower it).
 */
export const DEFAULT_HASH_COST = 17;
const costOf = (log2N: number) => ({ N: 2 ** log2N, r: 8, p: 1 });
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128 × N × r bytes; maxmem must be above that.
  const maxmem = 128 * cost.N * cost.r + 32 * 1024 * 1024;
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...cost, maxmem }, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string, log2N = DEFAULT_HASH_COST): Promise<string> {
  const cost = costOf(log2N);
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
 * A hash of no one's password, made once per cost, at the cost new hashes get: a sign-in with an email nobody
 * has still spends the time of a real check, so the answer's timing does not tell which accounts
 * exist.
 */
const decoys = new Map<number, Promise<string>>();
export function decoyHash(log2N = DEFAULT_HASH_COST): Promise<string> {
  let decoy = decoys.get(log2N);
  if (!decoy) decoys.set(log2N, (decoy = hashPassword(randomBytes(18).toString('base64url'), log2N)));
  return decoy;
}
