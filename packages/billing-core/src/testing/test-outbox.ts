import type { AppWebhookOutbox } from '../unit-of-work/app-webhook-outbox';

/**
 * The outbox of a process with neither WALLET_LOW_BALANCE_THRESHOLD nor APP_WEBHOOK_URL: messages
 * are written with no low-balance check and left to the relay. For tests that post ledger entries
 * directly (inUnitOfWork({ db, outbox: testOutbox }, …)) without a stack of their own.
 */
export const testOutbox: AppWebhookOutbox = { lowBalanceThreshold: undefined, handOff: undefined };
