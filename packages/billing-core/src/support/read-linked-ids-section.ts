import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { matchSubjectEvents } from './match-subject-events';
import type { SupportLinkedId, SupportSubject } from './user-support-view';

const linkedIdColumns = [
  ['provider_customer_id', 'customer'],
  ['provider_subscription_id', 'subscription'],
  ['provider_payment_intent_id', 'payment_intent'],
  ['provider_invoice_id', 'invoice'],
] as const;

/**
 * Ids linked to the user: provider ids the inbox has stored with its events (with the times of the
 * first and last event naming them), its aliases (`user_aliases`) and its Stripe customers
 * (`stripe_customers`). An id found in more than one place is listed once, with the earliest
 * first sighting and the latest last one.
 */
export async function readLinkedIdsSection(trx: Transaction<DB>, subject: SupportSubject): Promise<SupportLinkedId[]> {
  const { userId, userIds } = subject;
  const linked: SupportLinkedId[] = [];
  for (const [column, kind] of linkedIdColumns) {
    const rows = await trx
      .selectFrom('inbox_events')
      .select(['provider', sql<string>`${sql.ref(column)}`.as('id')])
      .select([sql<Date>`min(received_at)`.as('first_seen_at'), sql<Date>`max(received_at)`.as('last_seen_at')])
      .where(matchSubjectEvents(subject))
      .where(column, 'is not', null)
      .groupBy(['provider', column])
      .orderBy('first_seen_at')
      .execute();
    for (const row of rows) {
      linked.push({
        provider: row.provider,
        kind,
        id: row.id,
        firstSeenAt: row.first_seen_at,
        lastSeenAt: row.last_seen_at,
      });
    }
  }
  const aliases = await trx
    .selectFrom('user_aliases')
    .select(['alias', 'created_at'])
    .where('user_id', '=', userId)
    .where('alias', '<>', userId)
    .orderBy('created_at')
    .orderBy('alias')
    .execute();
  for (const alias of aliases) linked.push(linkedSince('tally', 'alias', alias.alias, alias.created_at));
  const customers = await trx
    .selectFrom('stripe_customers')
    .select(['customer_id', 'created_at'])
    .where('user_id', 'in', userIds)
    .orderBy('created_at')
    .execute();
  for (const customer of customers) {
    linked.push(linkedSince('stripe', 'customer', customer.customer_id, customer.created_at));
  }
  return mergeLinkedIds(linked);
}

/** An id linked once, by a row of its own (an alias, a Stripe customer): first and last seen when the row was made. */
function linkedSince(
  provider: SupportLinkedId['provider'],
  kind: SupportLinkedId['kind'],
  id: string,
  createdAt: Date,
): SupportLinkedId {
  return { provider, kind, id, firstSeenAt: createdAt, lastSeenAt: createdAt };
}

/** Linked ids with the same provider, kind and id merged: the earliest first sighting, the latest last one. */
function mergeLinkedIds(linked: readonly SupportLinkedId[]): SupportLinkedId[] {
  const merged = new Map<string, SupportLinkedId>();
  for (const entry of linked) {
    const key = `${entry.provider}\u0000${entry.kind}\u0000${entry.id}`;
    const seen = merged.get(key);
    if (!seen) merged.set(key, { ...entry });
    else {
      if (entry.firstSeenAt < seen.firstSeenAt) seen.firstSeenAt = entry.firstSeenAt;
      if (entry.lastSeenAt > seen.lastSeenAt) seen.lastSeenAt = entry.lastSeenAt;
    }
  }
  return [...merged.values()];
}
