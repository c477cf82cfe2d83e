import type { Kysely, Transaction } from 'kysely';
import { commitWith, runInTransaction, type TransactionDecision } from '../db/run-in-transaction';
import type { DB } from '../db/schema';
import { type AppWebhookOutbox, handOffCommitted, openOutbox } from './app-webhook-outbox';

/**
 * runInTransaction with the process's app webhook outbox: the messages `work` writes follow the
 * outbox's settings, and once the transaction has committed they are handed to the delivery queue
 * (never after a rollback, nor when COMMIT fails). The relay stays the safety net for a process
 * that dies between the commit and the hand-off.
 */
export async function runInOutboxTransaction<T>(
  db: Kysely<DB>,
  outbox: AppWebhookOutbox,
  work: (trx: Transaction<DB>) => Promise<TransactionDecision<T>>,
): Promise<T> {
  let open: ReturnType<typeof openOutbox> | undefined;
  let committing = false;
  const value = await runInTransaction(db, async (trx) => {
    open = openOutbox(trx, outbox);
    const decision = await work(trx);
    committing = decision.kind === 'commit';
    return decision;
  });
  // runInTransaction returned: a commit decision has committed (a failed COMMIT throws).
  if (committing) await handOffCommitted(outbox, open);
  return value;
}

/** One transaction that commits unless `work` throws, with the outbox (see runInOutboxTransaction). */
export function inOutboxTransaction<T>(
  db: Kysely<DB>,
  outbox: AppWebhookOutbox,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  return runInOutboxTransaction(db, outbox, async (trx) => commitWith(await work(trx)));
}

/** What a use case that writes app webhook messages needs: the database and the process's outbox. */
export interface OutboxDeps {
  db: Kysely<DB>;
  outbox: AppWebhookOutbox;
}
