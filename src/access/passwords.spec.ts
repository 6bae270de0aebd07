import { decoyHash, DEFAULT_HASH_COST, hashPassword, verifyPassword } from './passwords.js';

describe('passwords', () => {
  it("are hashed at the contract's cost by default: scrypt N = 2^17, r = 8, p = 1, a 16-byte salt", async () => {
    expect(DEFAULT_HASH_COST).toBe(17);
    const stored = await hashPassword('correct horse battery');
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
  });

  it('keep the cost they were made with: a check uses the stored one, whatever new hashes get', async () => {
    const cheap = await hashPassword('correct horse battery', 12);
    expect(cheap).toMatch(/^scrypt\$4096\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', cheap)).toBe(true);
    expect(await verifyPassword('correct horse batterY', cheap)).toBe(false);
    // The same password, another salt: another hash.
    expect(await hashPassword('correct horse battery', 12)).not.toBe(cheap);
  });

  it('refuse a stored value of another form or an outsized cost, without deriving anything', async () => {
    expect(await verifyPassword('x'.repeat(12), 'bcrypt$10$abc')).toBe(false);
    expect(await verifyPassword('x'.repeat(12), `scrypt$${2 ** 21}$8$1$AAAAAAAAAAAAAAAAAAAAAA$${'A'.repeat(43)}`)).toBe(false);
  });

  it('have a decoy per cost, made once: an unknown account is checked at the cost new hashes get', async () => {
    const decoy = await decoyHash(12);
    expect(decoy).toMatch(/^scrypt\$4096\$8\$1\$/);
    expect(await decoyHash(12)).toBe(decoy);
    expect(await decoyHash(13)).toMatch(/^scrypt\$8192\$8\$1\$/);
  });
});
