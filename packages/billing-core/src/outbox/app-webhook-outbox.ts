import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';

/**
 * How one process writes app webhook messages (docs/app-webhooks.md): built once by its
 * composition root from its configuration, and given to every use case that opens a transaction
 * which may write one (the inbox engine, studio, installments, top-ups, the subscription sync).
 * The use case opens that transaction with it (inOutboxTransaction, runInOutboxTransaction), and
 * the writers (postLedgerEntry, writeAppWebhookMessage) read it from the transaction they write in.
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
}

/** What the writers of app webhook messages see of their transaction's outbox. */
export interface TransactionOutbox {
  readonly lowBalanceThreshold: number | undefined;
  /**
   * The messages are handed off after this transaction's commit: they are written with
   * enqueued_at = now(), so the relay takes them only once that stamp is stale (the process died
   * between commit and hand-off, or the hand-off failed and released them). Otherwise NULL: the
   * relay's next pass hands them off.
   */
  readonly handsOff: boolean;
  /** Records messages written in this transaction (handed off once it commits). */
  written(messageIds: readonly number[]): void;
}

export class OutboxNotOpenError extends Error {
  constructor() {
    super(
      'app webhook messages are written in a transaction opened with the process outbox ' +
        '(inOutboxTransaction or runInOutboxTransaction), so the low-balance threshold and the hand-off after commit apply',
    );
    this.name = 'OutboxNotOpenError';
  }
}

interface OpenOutbox extends TransactionOutbox {
  readonly messageIds: number[];
}

/** The outbox of each open transaction; an entry dies with its transaction object. */
const openOutboxes = new WeakMap<Transaction<DB>, OpenOutbox>();

/** Opens `trx`'s outbox (the transaction runners do, right after BEGIN). */
export function openOutbox(trx: Transaction<DB>, outbox: AppWebhookOutbox): OpenOutbox {
  const messageIds: number[] = [];
  const open: OpenOutbox = {
    lowBalanceThreshold: outbox.lowBalanceThreshold,
    handsOff: outbox.handOff !== undefined,
    messageIds,
    written: (ids) => {
      messageIds.push(...ids);
    },
  };
  openOutboxes.set(trx, open);
  return open;
}

/**
 * The outbox of the transaction a writer writes in. Throws OutboxNotOpenError when the transaction
 * was opened without one: a money path that forgot it fails loudly in its tests, instead of
 * writing without the threshold or waiting for the relay.
 */
export function transactionOutbox(trx: Transaction<DB>): TransactionOutbox {
  const open = openOutboxes.get(trx);
  if (!open) throw new OutboxNotOpenError();
  return open;
}

/** After COMMIT: hands the transaction's messages off (waiting only when the hand-off says so). */
export async function handOffCommitted(outbox: AppWebhookOutbox, open: OpenOutbox | undefined): Promise<void> {
  if (!outbox.handOff || !open || open.messageIds.length === 0) return;
  await outbox.handOff(open.messageIds);
}
