import { parseEnv } from './env.schema.js';

describe('parseEnv', () => {
  it('applies the contract defaults', () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      PORT: 3000,
      DATABASE_URL: 'postgres://postgres@localhost:5432/tcc',
      DB_POOL_SIZE: 20,
      REDIS_URL: 'redis://localhost:6379',
      QUEUE_PREFIX: 'tcc',
      ROLE: 'all',
      PAYMENT_GATEWAY_URL: 'http://localhost:4000',
      PAYMENT_TIMEOUT_MS: 3000,
      RESERVATION_TTL_MS: 900000,
      CONFIRM_MAX_ATTEMPTS: 5,
      CONFIRM_RETRY_BASE_MS: 1000,
      BREAKER_ERROR_THRESHOLD_PERCENT: 50,
      BREAKER_RESET_TIMEOUT_MS: 30000,
      BREAKER_VOLUME_THRESHOLD: 10,
    });
    expect(env.ADMIN_TOKEN).toBeUndefined();
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ROLE', 'both'],
    ['DATABASE_URL', 'mysql://x'],
    ['PAYMENT_TIMEOUT_MS', '0'],
    ['CONFIRM_MAX_ATTEMPTS', '1.5'],
    ['BREAKER_ERROR_THRESHOLD_PERCENT', '101'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => parseEnv({ [name]: value })).toThrow(new RegExp(`^Invalid environment:[\\s\\S]*${name}`));
  });

  it.each(['RESERVATION_TTL_MS', 'PARTICIPANT_TTL_MS'] as const)('refuses a default %s longer than RESERVATION_MAX_TTL_MS', (name) => {
    expect(() => parseEnv({ [name]: '3600001' })).toThrow(`${name}: must not exceed RESERVATION_MAX_TTL_MS`);
    expect(parseEnv({ [name]: '3600001', RESERVATION_MAX_TTL_MS: '3600001' })[name]).toBe(3600001);
  });

  it('treats an empty ADMIN_TOKEN as unset', () => {
    expect(parseEnv({ ADMIN_TOKEN: '' }).ADMIN_TOKEN).toBeUndefined();
  });
});
