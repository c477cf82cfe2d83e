import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Files an event under the user the worker found (`inbox_events.user_id`): the stores'
 * notifications name no Tally user (Apple's carry an appAccountToken, Google's an obfuscated
 * account id, which the worker resolves), so ingest stored none, and the support view,
 * `GET /admin/events?userId` and the console find a user's events by it. Only an event filed under
 * nobody; in the event's own unit of work, so it commits with the event's effects. Idempotent.
 */
export async function fileEventUnderUser(trx: Transaction<DB>, inboxEventId: number, userId: string): Promise<void> {
  await trx
    .updateTable('inbox_events')
    .set({ user_id: userId })
    .where('id', '=', inboxEventId)
    .where('user_id', 'is', null)
    .execute();
}
