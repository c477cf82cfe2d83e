import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { readUserRows } from './read-user-rows';
import type { SupportSubject, SupportTopup } from './user-support-view';

/** Top-ups started through the API under any of the user's ids, newest first. */
export function readTopupsSection(trx: Transaction<DB>, subject: SupportSubject): Promise<SupportTopup[]> {
  return readUserRows(
    trx,
    subject,
    'topups',
    [
      'reference',
      'pack_id',
      'tokens',
      'amount_minor',
      'currency',
      'payment_intent_id',
      'status',
      'paid_at',
      'created_at',
    ],
    sql`created_at DESC`,
  );
}
