import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { readUserRows } from './read-user-rows';
import type { SupportRefund, SupportSubject } from './user-support-view';

/** Token pack refunds (`token_refunds`: RevenueCat cancellations of packs), newest first. */
export function readRefundsSection(trx: Transaction<DB>, subject: SupportSubject): Promise<SupportRefund[]> {
  return readUserRows(
    trx,
    subject,
    'token_refunds',
    [
      'id',
      'provider',
      'provider_refund_id',
      'pack_id',
      'credit_reference',
      'tokens_credited',
      'tokens_taken',
      'shortfall',
      'inbox_event_id',
      'created_at',
    ],
    sql`id DESC`,
  );
}
