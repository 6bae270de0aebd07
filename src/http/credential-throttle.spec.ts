import { Redis } from 'ioredis';
import { CredentialThrottle, WRONG_CREDENTIALS_PER_WINDOW } from './credential-throttle.js';

/**
 * The throttle's own arithmetic, with Redis away (a port nobody listens on): the count it then keeps
 * in memory. The shared count in Redis is tested end to end (test/credential-throttle).
 */
describe('CredentialThrottle without Redis', () => {
  let throttle: CredentialThrottle;
  beforeEach(() => {
    throttle = new CredentialThrottle({ redis: new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 250, lazyConnect: false }), prefix: 'unit', windowMs: 300 });
  });
  afterEach(async () => {
    await throttle.close();
  });

  it('the sixth wrong credential and anything after it wait, the right one too; other addresses do not', async () => {
    expect(await throttle.blocked('a')).toBeUndefined();
    for (let i = 0; i < WRONG_CREDENTIALS_PER_WINDOW; i++) expect(await throttle.failed('a')).toBeUndefined();
    expect(await throttle.blocked('a')).toBe(1);
    expect(await throttle.failed('a')).toBe(1);
    expect(await throttle.blocked('b')).toBeUndefined();
  });

  it('the window starts with the first wrong one and ends on its own', async () => {
    for (let i = 0; i < WRONG_CREDENTIALS_PER_WINDOW + 3; i++) await throttle.failed('a');
    expect(await throttle.blocked('a')).toBe(1);
    await new Promise((r) => setTimeout(r, 350));
    expect(await throttle.blocked('a')).toBeUndefined();
    expect(await throttle.failed('a')).toBeUndefined();
  });

  it('a count taken back (forgive) frees its place, never goes below zero, and touches no other address', async () => {
    for (let i = 0; i < WRONG_CREDENTIALS_PER_WINDOW; i++) await throttle.failed('d');
    expect(await throttle.blocked('d')).toBe(1);
    await throttle.forgive('d');
    expect(await throttle.blocked('d')).toBeUndefined();
    for (let i = 0; i < WRONG_CREDENTIALS_PER_WINDOW + 2; i++) await throttle.forgive('d');
    await throttle.forgive('e');
    for (let i = 0; i < WRONG_CREDENTIALS_PER_WINDOW; i++) expect(await throttle.failed('d')).toBeUndefined();
    expect(await throttle.failed('d')).toBe(1);
    expect(await throttle.blocked('e')).toBeUndefined();
  });

  it('at most 5 wrong ones of a burst are let through, however they interleave', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => throttle.failed('c')));
    expect(answers.filter((a) => a === undefined)).toHaveLength(WRONG_CREDENTIALS_PER_WINDOW);
  });
});
