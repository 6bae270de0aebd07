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

  it("keeps the contract's windows by default, which only the tests shorten", () => {
    expect(parseEnv({})).toMatchObject({
      REQUEST_TIMEOUT_MS: 30_000,
      RATE_LIMIT_WINDOW_MS: 60_000,
      CREDENTIAL_THROTTLE_WINDOW_MS: 60_000,
      MIGRATION_STATEMENT_TIMEOUT_MS: 30_000,
      STEP_LEASE_MARGIN_MS: 5000,
      WEBHOOK_DELIVERY_TIMEOUT_MS: 5000,
    });
    expect(parseEnv({}).REFUND_WATCH_MS).toBeUndefined();
  });

  it("hashes new passwords at the contract's scrypt cost (2^17) unless told, never below 2^12", () => {
    expect(parseEnv({}).PASSWORD_HASH_COST).toBe(17);
    expect(parseEnv({ PASSWORD_HASH_COST: '12' }).PASSWORD_HASH_COST).toBe(12);
    expect(() => parseEnv({ PASSWORD_HASH_COST: '11' })).toThrow(/PASSWORD_HASH_COST/);
    expect(() => parseEnv({ PASSWORD_HASH_COST: '21' })).toThrow(/PASSWORD_HASH_COST/);
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

  it.each(['RESERVATION_TTL_MS', 'PARTICIPANT_TTL_MS'] as const)('refuses a %s set above a RESERVATION_MAX_TTL_MS that is set too', (name) => {
    expect(() => parseEnv({ [name]: '120001', RESERVATION_MAX_TTL_MS: '120000' })).toThrow(`${name}: must not exceed RESERVATION_MAX_TTL_MS`);
    expect(() => parseEnv({ [name]: '', RESERVATION_MAX_TTL_MS: '120000' })).not.toThrow();
    expect(parseEnv({ [name]: '120000', RESERVATION_MAX_TTL_MS: '120000' })[name]).toBe(120000);
  });

  it('names both holds when both are set above the cap', () => {
    expect(() => parseEnv({ RESERVATION_TTL_MS: '5000', PARTICIPANT_TTL_MS: '5000', RESERVATION_MAX_TTL_MS: '4000' })).toThrow(
      /RESERVATION_TTL_MS: must not exceed RESERVATION_MAX_TTL_MS\n\s+PARTICIPANT_TTL_MS: must not exceed RESERVATION_MAX_TTL_MS/,
    );
  });

  it('unset, the holds default to 900000, or to RESERVATION_MAX_TTL_MS when that is lower', () => {
    expect(parseEnv({})).toMatchObject({ RESERVATION_MAX_TTL_MS: 3_600_000, RESERVATION_TTL_MS: 900_000, PARTICIPANT_TTL_MS: 900_000 });
    expect(parseEnv({ RESERVATION_MAX_TTL_MS: '120000' })).toMatchObject({ RESERVATION_MAX_TTL_MS: 120_000, RESERVATION_TTL_MS: 120_000, PARTICIPANT_TTL_MS: 120_000 });
    expect(parseEnv({ RESERVATION_MAX_TTL_MS: '900000' })).toMatchObject({ RESERVATION_TTL_MS: 900_000, PARTICIPANT_TTL_MS: 900_000 });
    expect(parseEnv({ RESERVATION_MAX_TTL_MS: '7200000' })).toMatchObject({ RESERVATION_TTL_MS: 900_000, PARTICIPANT_TTL_MS: 900_000 });
    // One set, the other following the cap.
    expect(parseEnv({ RESERVATION_MAX_TTL_MS: '120000', RESERVATION_TTL_MS: '60000' })).toMatchObject({ RESERVATION_TTL_MS: 60_000, PARTICIPANT_TTL_MS: 120_000 });
    expect(parseEnv({ RESERVATION_MAX_TTL_MS: '120000', PARTICIPANT_TTL_MS: '30000' })).toMatchObject({ RESERVATION_TTL_MS: 120_000, PARTICIPANT_TTL_MS: 30_000 });
  });

  it('a bad RESERVATION_MAX_TTL_MS is named as itself, not through the holds that follow it', () => {
    expect(() => parseEnv({ RESERVATION_MAX_TTL_MS: '10' })).toThrow(/^Invalid environment:\n {2}RESERVATION_MAX_TTL_MS: [^\n]*$/);
  });

  it('reads the Redis topology and TRUST_PROXY; unset, none of them', () => {
    const unset = parseEnv({});
    expect([unset.REDIS_CLUSTER_NODES, unset.REDIS_SENTINELS, unset.REDIS_SENTINEL_MASTER, unset.TRUST_PROXY]).toEqual([undefined, undefined, undefined, undefined]);
    expect(parseEnv({ REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000' }).REDIS_CLUSTER_NODES).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7000 },
    ]);
    expect(parseEnv({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'mymaster' })).toMatchObject({ REDIS_SENTINELS: [{ host: 's1', port: 26379 }], REDIS_SENTINEL_MASTER: 'mymaster' });
    expect(parseEnv({ TRUST_PROXY: '10.0.0.0/8' }).TRUST_PROXY).toEqual([{ family: 'ipv4', address: '10.0.0.0', prefix: 8 }]);
  });

  it.each([
    [{ REDIS_CLUSTER_NODES: '10.0.0.1' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_SENTINELS: 's1:26379' }, 'REDIS_SENTINEL_MASTER: must be set with REDIS_SENTINELS'],
    [{ REDIS_SENTINEL_MASTER: 'mymaster' }, 'REDIS_SENTINELS: must be set with REDIS_SENTINEL_MASTER'],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_CLUSTER_NODES: set either it or REDIS_SENTINELS'],
    [{ TRUST_PROXY: '10.0.0.0/8,proxy.internal' }, 'TRUST_PROXY: "proxy.internal" is not an IP address or CIDR range'],
  ])('refuses %j naming the variable', (given, message) => {
    expect(() => parseEnv(given)).toThrow(message);
  });

  it('DATABASE_DIRECT_URL defaults to DATABASE_URL; no read replica unless DATABASE_READ_URL names one, lag limit 1000 ms', () => {
    expect(parseEnv({ DATABASE_URL: 'postgres://u@pooler:6432/tcc' })).toMatchObject({
      DATABASE_URL: 'postgres://u@pooler:6432/tcc',
      DATABASE_DIRECT_URL: 'postgres://u@pooler:6432/tcc',
      READ_REPLICA_MAX_LAG_MS: 1000,
    });
    expect(parseEnv({}).DATABASE_DIRECT_URL).toBe('postgres://postgres@localhost:5432/tcc');
    expect(parseEnv({}).DATABASE_READ_URL).toBeUndefined();
    expect(parseEnv({ DATABASE_URL: 'postgres://u@pooler:6432/tcc', DATABASE_DIRECT_URL: 'postgres://u@db:5432/tcc' }).DATABASE_DIRECT_URL).toBe('postgres://u@db:5432/tcc');
    expect(() => parseEnv({ DATABASE_READ_URL: 'redis://replica' })).toThrow(/DATABASE_READ_URL/);
    expect(() => parseEnv({ READ_REPLICA_MAX_LAG_MS: '-1' })).toThrow(/READ_REPLICA_MAX_LAG_MS/);
  });

  it('treats an empty ADMIN_TOKEN as unset', () => {
    expect(parseEnv({ ADMIN_TOKEN: '' }).ADMIN_TOKEN).toBeUndefined();
  });
});
