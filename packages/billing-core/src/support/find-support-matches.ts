import type { Kysely } from 'kysely';
import { type DB, type Provider, providers } from '../db/schema';
import { resolveUserId } from '../users/link-user-ids';

/** What a support search found: a user (canonical) and how the text led to it, or an inbox event. */
export type SupportMatch =
  | { kind: 'user'; userId: string; via: SupportMatchVia }
  | { kind: 'event'; inboxEventId: number; provider: Provider; providerEventId: string; type: string; via: string };

export type SupportMatchVia =
  | 'user id'
  | 'linked id'
  | 'stripe customer'
  | 'stripe subscription'
  | 'stripe payment'
  | 'stripe invoice'
  | 'top-up'
  | 'ledger reference'
  | 'inbox event';

const eventColumns = ['id', 'provider', 'provider_event_id', 'type'] as const;

/**
 * Everything one pasted id can name: a user id or any id linked to it (or the user id an inbox
 * event was filed under, for a user Tally knows only from that event), a provider event id, a
 * Stripe customer, subscription, payment intent or invoice id, a top-up or ledger reference, or an
 * inbox event number. Users come back canonical and once each; Stripe events naming the id are
 * listed only when no user owns it. Every lookup is an equality on a unique or indexed column; at
 * most `limit` events are listed.
 */
export async function findSupportMatches(db: Kysely<DB>, text: string, limit = 20): Promise<SupportMatch[]> {
  const q = text.trim();
  if (q.length === 0 || q.length > 255) return [];
  const users: { userId: string; via: SupportMatchVia }[] = [];

  const alias = await db.selectFrom('user_aliases').select('user_id').where('alias', '=', q).executeTakeFirst();
  if (alias) users.push({ userId: alias.user_id, via: alias.user_id === q ? 'user id' : 'linked id' });
  const known = await db
    .selectFrom('wallets')
    .select('user_id')
    .where('user_id', '=', q)
    .union(db.selectFrom('users').select('id as user_id').where('id', '=', q))
    .executeTakeFirst();
  if (known) users.push({ userId: q, via: 'user id' });
  // A user whose only trace is an event in the inbox (a first purchase that parked before it
  // created the wallet): the id the event was filed under. One probe of inbox_events_user_idx
  // (user_id, id), however large the inbox.
  if (!alias && !known) {
    const filed = await db
      .selectFrom('inbox_events')
      .select('user_id')
      .where('user_id', '=', q)
      .limit(1)
      .executeTakeFirst();
    // guard: console-search-inbox-user
    if (filed) users.push({ userId: q, via: 'inbox event' });
  }

  const owners: [SupportMatchVia, Promise<{ user_id: string } | undefined>][] = [
    [
      'stripe customer',
      db.selectFrom('stripe_customers').select('user_id').where('customer_id', '=', q).executeTakeFirst(),
    ],
    [
      'stripe subscription',
      db.selectFrom('stripe_subscriptions').select('user_id').where('subscription_id', '=', q).executeTakeFirst(),
    ],
    [
      'stripe payment',
      db
        .selectFrom('payments')
        .select('user_id')
        .where('provider', '=', 'stripe')
        .where('provider_payment_id', '=', q)
        .executeTakeFirst(),
    ],
    [
      'stripe invoice',
      db.selectFrom('stripe_installments').select('user_id').where('invoice_id', '=', q).executeTakeFirst(),
    ],
    [
      'top-up',
      db
        .selectFrom('topups')
        .select('user_id')
        .where((eb) => eb.or([eb('reference', '=', q), eb('payment_intent_id', '=', q)]))
        .executeTakeFirst(),
    ],
    [
      'ledger reference',
      db.selectFrom('ledger_entries').select('user_id').where('reference', '=', q).executeTakeFirst(),
    ],
  ];
  for (const [via, lookup] of owners) {
    const row = await lookup;
    if (row) users.push({ userId: row.user_id, via });
  }

  const byProviderId = await db
    .selectFrom('inbox_events')
    .select(eventColumns)
    .where('provider', 'in', providers)
    .where('provider_event_id', '=', q)
    .execute();
  // Stripe events naming the id; only when no user owns it (else they are on that user's page).
  const byStripeId =
    users.length > 0
      ? []
      : await db
          .selectFrom('inbox_events')
          .select(eventColumns)
          .where('provider', '=', 'stripe')
          .where((eb) =>
            eb.or([
              eb('provider_customer_id', '=', q),
              eb('provider_subscription_id', '=', q),
              eb('provider_payment_intent_id', '=', q),
              eb('provider_invoice_id', '=', q),
            ]),
          )
          .orderBy('id', 'desc')
          .limit(limit)
          .execute();
  const byNumber = /^[1-9][0-9]{0,14}$/.test(q)
    ? await db.selectFrom('inbox_events').select(eventColumns).where('id', '=', Number(q)).execute()
    : [];

  const matches: SupportMatch[] = [];
  const seenUsers = new Set<string>();
  for (const user of users) {
    const canonical = await resolveUserId(db, user.userId);
    if (seenUsers.has(canonical)) continue;
    seenUsers.add(canonical);
    matches.push({ kind: 'user', userId: canonical, via: user.via });
  }
  const seenEvents = new Set<number>();
  const events = [
    ...byProviderId.map((row) => ({ row, via: 'provider event id' })),
    ...byNumber.map((row) => ({ row, via: 'inbox event number' })),
    ...byStripeId.map((row) => ({ row, via: 'stripe id in the event' })),
  ];
  for (const { row, via } of events) {
    if (seenEvents.has(row.id) || seenEvents.size >= limit) continue;
    seenEvents.add(row.id);
    matches.push({
      kind: 'event',
      inboxEventId: row.id,
      provider: row.provider,
      providerEventId: row.provider_event_id,
      type: row.type,
      via,
    });
  }
  return matches;
}
