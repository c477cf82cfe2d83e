import { sql, type Transaction } from 'kysely';
import { countRows } from '../db/count-rows';
import type { DB } from '../db/schema';
import { inboxSummaryColumns } from '../inbox/list-inbox-events';
import { toInboxEventView } from '../inbox/to-inbox-event-view';
import { matchSubjectEvents } from './match-subject-events';
import type { SupportAttention, SupportEvents, SupportSubject } from './user-support-view';

const attentionRank = sql<number>`CASE
  WHEN status = 'failed' THEN 0
  WHEN status IN ('received', 'processing') AND outcome_code = 'retrying' THEN 1
  WHEN status IN ('received', 'processing') AND outcome_code = 'waiting' THEN 2
  WHEN status IN ('received', 'processing') THEN 3
  ELSE 4 END`;
const attentionByRank: readonly SupportAttention[] = ['parked', 'retrying', 'waiting', 'in_progress', 'none'];

/**
 * Inbox events naming the user, an alias, or one of its Stripe ids, at most `limit`: the ones
 * needing attention first, then newest first; `total` counts every such event.
 */
export async function readEventsSection(
  trx: Transaction<DB>,
  subject: SupportSubject,
  limit: number,
): Promise<SupportEvents> {
  const rows = await trx
    .selectFrom('inbox_events')
    .select(inboxSummaryColumns)
    .select(attentionRank.as('attention_rank'))
    .where(matchSubjectEvents(subject))
    .orderBy('attention_rank')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  const total = await countRows(trx.selectFrom('inbox_events').where(matchSubjectEvents(subject)));
  return {
    items: rows.map((row) => ({ ...toInboxEventView(row), attention: attentionByRank[row.attention_rank] ?? 'none' })),
    total,
    truncated: total > rows.length,
  };
}
