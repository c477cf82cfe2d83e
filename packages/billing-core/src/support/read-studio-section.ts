import { sql } from 'kysely';
import type { SupportSectionReader } from './find-user-support-view';

/** AI Studio requests, newest first, at most `limits.studioRequests` (the total says how many exist). */
export const readStudioSection: SupportSectionReader = async (trx, { userIds }, limits) => {
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
    .limit(limits.studioRequests)
    .execute();
  const { count } = await trx
    .selectFrom('studio_requests')
    .select(sql<string>`count(*)`.as('count'))
    .where('user_id', 'in', userIds)
    .executeTakeFirstOrThrow();
  const total = Number(count);
  return {
    studioRequests: {
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
    },
  };
};
