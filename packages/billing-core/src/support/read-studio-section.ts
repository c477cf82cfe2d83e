import type { Transaction } from 'kysely';
import { countRows } from '../db/count-rows';
import type { DB } from '../db/schema';
import type { SupportStudioRequests, SupportSubject } from './user-support-view';

/** AI Studio requests, newest first, at most `limit` (the total says how many exist). */
export async function readStudioSection(
  trx: Transaction<DB>,
  { userIds }: SupportSubject,
  limit: number,
): Promise<SupportStudioRequests> {
  const rows = await trx
    .selectFrom('studio_requests')
    .select([
      'public_id',
      'kind',
      'duration_seconds',
      'full',
      'status',
      'price_tokens',
      'tokens_charged',
      'free_tier',
      'attempts',
      'error_code',
      'error',
      'refunded_at',
      'created_at',
      'completed_at',
      'failed_at',
    ])
    .where('user_id', 'in', userIds)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  const total = await countRows(trx.selectFrom('studio_requests').where('user_id', 'in', userIds));
  return {
    items: rows.map((row) => ({
      id: row.public_id,
      kind: row.kind,
      durationSeconds: row.duration_seconds,
      full: row.full,
      status: row.status,
      priceTokens: row.price_tokens,
      tokensCharged: row.tokens_charged,
      freeTier: row.free_tier,
      attempts: row.attempts,
      error: row.error_code === null && row.error === null ? null : { code: row.error_code, message: row.error },
      refundedAt: row.refunded_at,
      createdAt: row.created_at,
      completedAt: row.completed_at,
      failedAt: row.failed_at,
    })),
    total,
    truncated: total > rows.length,
  };
}
