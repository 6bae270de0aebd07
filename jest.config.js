// ESM: NestJS 12 ships as ES modules, so the suite runs under --experimental-vm-modules (see package.json).
const typescript = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
};

/**
 * Two projects. `unit`: the specs beside the code (src/**\/*.spec.ts), each one class or function
 * with its collaborators faked: no database, no Redis, no build (`npm run test:unit`). `e2e`: the
 * specs in test/, against the built service, Postgres and Redis; its global setup migrates a
 * template database every file clones (`npm run test:e2e`). `npm test` runs both.
 */
export default {
  projects: [
    { ...typescript, displayName: 'unit', rootDir: '.', roots: ['<rootDir>/src'], testRegex: '.*\\.spec\\.ts$' },
    {
      ...typescript,
      displayName: 'e2e',
      rootDir: '.',
      roots: ['<rootDir>/test'],
      testRegex: '.*\\.e2e-spec\\.ts$',
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
  testTimeout: 60000,
};
