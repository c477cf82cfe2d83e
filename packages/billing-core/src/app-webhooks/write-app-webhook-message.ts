import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { ensureWallet } from '../ledger/ensure-wallet';
import type { UnitOfWork, UnitOfWorkOutbox } from '../unit-of-work/unit-of-work';
import type { FlowAppWebhookMessage } from './app-webhook-message-types';

/**
 * Writes one app webhook message inside the transaction of the change it announces, so the
 * message commits with the change or not at all. Locks the user's wallet row first (creating
 * the wallet if missing) and holds it to commit: every message writer does, so one user's
 * message ids are in commit order, which the delivery gate relies on. Not idempotent: the caller
 * writes it only when its change happened (a conditional update that matched, a state that
 * differs). The unit of work records the message and hands it off after its commit.
 */
export async function writeAppWebhookMessage(uow: UnitOfWork, message: FlowAppWebhookMessage): Promise<void> {
  const { trx, outbox } = uow;
  if (await insertUnderWalletLock(trx, outbox, message)) return;
  await ensureWallet(uow, message.userId);
  if (!(await insertUnderWalletLock(trx, outbox, message))) {
    throw new Error(`wallet ${message.userId} was created but cannot be locked`);
  }
}

async function insertUnderWalletLock(
  trx: Transaction<DB>,
  outbox: UnitOfWorkOutbox,
  message: FlowAppWebhookMessage,
): Promise<boolean> {
  const inserted = await sql<{ id: number }>`
    WITH wallet AS (SELECT user_id FROM wallets WHERE user_id = ${message.userId} FOR UPDATE)
    INSERT INTO app_webhook_messages (user_id, type, data, enqueued_at)
    SELECT user_id, ${message.type}, ${JSON.stringify(message.data)}::jsonb,
           CASE WHEN ${outbox.handsOff}::boolean THEN now() END
      FROM wallet
    RETURNING id`.execute(trx);
  outbox.written(inserted.rows.map((row) => row.id));
  return inserted.rows.length > 0;
}
