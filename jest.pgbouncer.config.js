/**
 * The end-to-end stack tests again, every service behind a real PgBouncer in transaction mode
 * with a pool smaller than the services' pools together (test/global-setup.ts starts it when
 * TEST_VIA_PGBOUNCER=1; scripts/test.mjs runs this after the main run). It proves Tally keeps no
 * session state: no startup options, no session advisory lock, no SET outside a transaction.
 */
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test'],
  testMatch: [
    '<rootDir>/test/e2e/stripe-webhooks.int.test.ts',
    '<rootDir>/test/e2e/revenuecat-webhooks.int.test.ts',
    '<rootDir>/test/e2e/stripe-payments.int.test.ts',
    '<rootDir>/test/e2e/engine.int.test.ts',
    '<rootDir>/test/e2e/retries.int.test.ts',
    '<rootDir>/test/e2e/relay.int.test.ts',
    '<rootDir>/test/e2e/api.int.test.ts',
    '<rootDir>/test/e2e/exactly-once.int.test.ts',
    '<rootDir>/test/e2e/processes.int.test.ts',
    '<rootDir>/test/e2e/studio.int.test.ts',
    '<rootDir>/test/e2e/lots.int.test.ts',
    '<rootDir>/test/e2e/reconcile.int.test.ts',
    '<rootDir>/test/e2e/reconcile-loop.int.test.ts',
    '<rootDir>/test/e2e/dashboard.int.test.ts',
    '<rootDir>/test/e2e/frozen-transaction.int.test.ts',
  ],
};
