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
    '<rootDir>/test/e2e/stripe/stripe-webhooks.int.test.ts',
    '<rootDir>/test/e2e/revenuecat/revenuecat-webhooks.int.test.ts',
    '<rootDir>/test/e2e/stripe/stripe-payments.int.test.ts',
    '<rootDir>/test/e2e/inbox/engine.int.test.ts',
    '<rootDir>/test/e2e/inbox/retries.int.test.ts',
    '<rootDir>/test/e2e/inbox/relay.int.test.ts',
    '<rootDir>/test/e2e/api/api.int.test.ts',
    '<rootDir>/test/e2e/inbox/exactly-once.int.test.ts',
    '<rootDir>/test/e2e/operations/processes.int.test.ts',
    '<rootDir>/test/e2e/studio/studio.int.test.ts',
    '<rootDir>/test/e2e/ledger/lots.int.test.ts',
    '<rootDir>/test/e2e/stripe/reconcile.int.test.ts',
    '<rootDir>/test/e2e/stripe/reconcile-loop.int.test.ts',
    '<rootDir>/test/e2e/console/dashboard.int.test.ts',
    '<rootDir>/test/e2e/faults/frozen-transaction.int.test.ts',
    '<rootDir>/test/e2e/spending/holds.int.test.ts',
    '<rootDir>/test/e2e/spending/debits.int.test.ts',
  ],
};
