import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { references } from '../references';
import type { SupportInstallment, SupportSubject } from './user-support-view';

/** Annual-plan installments (`stripe_installments`) by due date, each with the reference its grant is posted under. */
export async function readInstallmentsSection(
  trx: Transaction<DB>,
  { userIds }: SupportSubject,
): Promise<SupportInstallment[]> {
  const rows = await trx
    .selectFrom('stripe_installments')
    .selectAll()
    .where('user_id', 'in', userIds)
    .orderBy('due_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    subscriptionId: row.subscription_id,
    invoiceId: row.invoice_id,
    sequence: row.sequence,
    tokens: row.tokens,
    dueAt: row.due_at,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    grantedAt: row.granted_at,
    ledgerReference: references.stripeInstallment(row.id),
  }));
}
