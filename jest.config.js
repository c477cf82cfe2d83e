/** One Jest run for the whole workspace; TypeScript is compiled by SWC, workspace packages map to src. */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/packages', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  moduleNameMapper: {
    '^@tally/billing-core/testing$': '<rootDir>/packages/billing-core/src/testing/index.ts',
    '^@tally/platform/(db|testing)$': '<rootDir>/packages/platform/src/$1/index.ts',
    '^@tally/([^/]+)$': '<rootDir>/packages/$1/src/index.ts',
  },
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
