/** `npm run test:model`: the model check of the money rules (test/model, docs/model-check.md). */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/model'],
  testMatch: ['**/*.model.ts', '**/*.int.test.ts'],
  testTimeout: 3_600_000,
  maxWorkers: 1,
};
