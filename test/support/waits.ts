import type { DB } from '@tally/billing-core';
import type { Kysely } from 'kysely';
import { eventually } from './stack';

/**
 * Waits for rows a worker moves on its own (inbox events, app webhook messages, emails): each
 * polls one query with `eventually` until the rows are as asked, and returns them.
 */

/**
 * Waits until the inbox rows of a user (or of a Stripe payment intent) are `count` in number
 * (when given) and all in `status`; returns them.
 */
export function untilInboxRows(
  db: Kysely<DB>,
  of: { userId: string } | { paymentIntentId: string },
  expected: { status: 'processed' | 'failed'; count?: number },
  what = `${expected.count ?? 'the'} events to be ${expected.status}`,
) {
  return eventually(what, async () => {
    const all = db.selectFrom('inbox_events').select('status');
    const rows = await ('userId' in of
      ? all.where('user_id', '=', of.userId)
      : all.where('provider_payment_intent_id', '=', of.paymentIntentId)
    ).execute();
    const counted = expected.count === undefined || rows.length === expected.count;
    return counted && rows.every((row) => row.status === expected.status) ? rows : undefined;
  });
}

/** Waits until the (first) app webhook message of `userId` has `status`; returns its row. */
export function untilAppWebhookMessage(
  db: Kysely<DB>,
  userId: string,
  status: string,
  what: string,
  timeoutMs?: number,
) {
  return eventually(
    what,
    async () => {
      const row = await db
        .selectFrom('app_webhook_messages')
        .selectAll()
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.status === status ? row : undefined;
    },
    timeoutMs,
  );
}

/** Waits until the (first) email of `userId` has `status`; returns its row. */
export function untilEmail(db: Kysely<DB>, userId: string, status: string, what: string) {
  return eventually(what, async () => {
    const row = await db.selectFrom('email_outbox').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row?.status === status ? row : undefined;
  });
}
