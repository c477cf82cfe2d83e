/**
 * How one process writes app webhook messages (docs/app-webhooks.md): built once by its
 * composition root from its configuration, and given to every use case that opens a unit of work
 * which may write one (the inbox engine, studio, installments, top-ups, the subscription sync).
 * The use case opens the unit with it (runInUnitOfWork, inUnitOfWork), and the writers
 * (postLedgerEntry, writeAppWebhookMessage) read it from the unit they write in.
 */
export interface AppWebhookOutbox {
  /**
   * WALLET_LOW_BALANCE_THRESHOLD: a debit taking a balance from at least this to below it also
   * writes `wallet.balance_low`. Undefined: none is written.
   */
  readonly lowBalanceThreshold: number | undefined;
  /**
   * With APP_WEBHOOK_URL: hands the messages a transaction wrote to the delivery queue, called
   * right after that transaction committed. It runs behind the caller and returns a promise only
   * when the caller must wait for it (too many hand-offs already running behind: bounded); it
   * never rejects (a failed hand-off releases its rows to the relay). Undefined: no hand-off, the
   * relay finds new messages on its next pass (or, without APP_WEBHOOK_URL, nothing delivers them).
   */
  readonly handOff: ((messageIds: readonly number[]) => Promise<void> | undefined) | undefined;
  /**
   * DEBT_POLICY (docs/debt.md): whether a paid credit settles the wallet's debt first (`settle`,
   * the default when absent) or debt is only recorded (`forgive`). A setting of the process's
   * money writes that travels with the outbox's into every unit of work (the ledger reads it
   * there, as it reads the low-balance threshold).
   */
  readonly debtPolicy?: DebtPolicy;
}

/** DEBT_POLICY's values (docs/debt.md). */
export type DebtPolicy = 'settle' | 'forgive';
