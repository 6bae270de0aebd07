import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { secretProblem } from './webhook-secret.js';

const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;

describe('secretProblem', () => {
  it.each([24, 25, 26, 32, 48, 63, 64])('accepts %i random bytes, and the reference library decodes them to the same key', (n) => {
    const secret = secretOf(n);
    expect(secretProblem(secret)).toBeUndefined();
    // The library signs with the key it decoded: the same HMAC as one over our decoding.
    const sig = new Webhook(secret).sign('msg_1', new Date(1_700_000_000_000), '{}');
    const again = new Webhook(Buffer.from(secret.slice(6), 'base64'), { format: 'raw' }).sign('msg_1', new Date(1_700_000_000_000), '{}');
    expect(sig).toBe(again);
  });

  it.each([
    ['too short', secretOf(23)],
    ['too long', secretOf(65)],
    ['no prefix', randomBytes(32).toString('base64')],
    ['wrong prefix', `whsek_${randomBytes(32).toString('base64')}`],
    ['empty key', 'whsec_'],
    ['unpadded', `whsec_${randomBytes(32).toString('base64').replace(/=+$/, '')}`],
    ['base64url alphabet', `whsec_${Buffer.alloc(33, 0xfb).toString('base64url')}`],
    ['a stray character', `whsec_${randomBytes(32).toString('base64').slice(0, 20)}!${randomBytes(32).toString('base64').slice(21)}`],
    ['non-canonical padding bits', `whsec_${'A'.repeat(42)}B=`],
    ['whitespace', `whsec_ ${randomBytes(32).toString('base64')}`],
  ])('refuses %s', (_what, secret) => {
    expect(secretProblem(secret)).toMatch(/^secret must be whsec_/);
  });

  it('never quotes the secret it refuses', () => {
    const secret = secretOf(10);
    expect(secretProblem(secret)).not.toContain(secret.slice(6));
  });
});
