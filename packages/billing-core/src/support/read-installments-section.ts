import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { references } from '../references';
import { readUserRows } from './read-user-rows';
import type { SupportInstallment, SupportSubject } from './user-support-view';

/** Annual-plan installments (`stripe_installments`) by due date, each with the reference its grant is posted under. */
export async function readInstallmentsSection(
  trx: Transaction<DB>,
  subject: SupportSubject,
): Promise<SupportInstallment[]> {
  const installments = await readUserRows(
    trx,
    subject,
    'stripe_installments',
    [
      'id',
      'subscription_id',
      'invoice_id',
      'sequence',
      'tokens',
      'due_at',
      'status',
      'attempts',
      'last_error',
      'granted_at',
    ],
    sql`due_at, id`,
  );
  return installments.map((installment) => ({
    ...installment,
    ledgerReference: references.stripeInstallment(installment.id),
  }));
}
