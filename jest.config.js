// ESM: NestJS 12 ships as ES modules, so the suite runs under --experimental-vm-modules (see package.json).
const typescript = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
};

/**
 * The e2e files that run one after the other (in one Jest process beside the parallel workers,
 * `npm test`): each starts engines of its own (PostgreSQL, PgBouncer, Redis Cluster or Sentinel)
 * on free ports and a dozen service processes, then carries a checkout load through faults; two
 * of them at once would start two dozen processes together. Every other e2e file is isolated (its
 * own database, queue prefix, ports, and its own redis-server when it wipes or stops Redis) and
 * runs in parallel workers.
 */
export const IN_BAND = ['topology', 'redis-cluster', 'redis-sentinel'];
const inBand = `/test/(${IN_BAND.join('|')})\\.e2e-spec\\.ts$`;

const e2e = {
  ...typescript,
  rootDir: '.',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

/**
 * Four projects (docs/TESTING.md). `unit`: the specs beside the code (src/**\/*.spec.ts), each one
 * class or function with its collaborators faked: no database, no Redis, no build. `medium`:
 * test/medium/*.spec.ts, the SQL functions called in a transaction that is rolled back, on a
 * database of the worker's own, no service process. `e2e`: the specs in test/, against the built
 * service, Postgres and Redis, in parallel workers; `e2e-in-band`: the IN_BAND ones. The e2e global
 * setup migrates a template database every file clones. `npm test` (scripts/test.mjs) runs them all.
 */
export default {
  projects: [
    { ...typescript, displayName: 'unit', rootDir: '.', roots: ['<rootDir>/src'], testRegex: '.*\\.spec\\.ts$' },
    { ...e2e, displayName: 'medium', roots: ['<rootDir>/test/medium'], testRegex: '.*\\.spec\\.ts$' },
    { ...e2e, displayName: 'e2e', roots: ['<rootDir>/test'], testRegex: '/test/[^/]+\\.e2e-spec\\.ts$', testPathIgnorePatterns: ['/node_modules/', inBand] },
    { ...e2e, displayName: 'e2e-in-band', roots: ['<rootDir>/test'], testRegex: inBand },
  ],
  testTimeout: 60000,
};
