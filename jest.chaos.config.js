/** `npm run test:chaos`: the chaos suite (test/chaos), one file at a time; own Postgres and Redis. */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/chaos'],
  testMatch: ['**/*.chaos.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  testTimeout: 600_000,
  maxWorkers: 1,
};
