import { isDeepStrictEqual } from 'node:util';
import { type DB, parseWebhookId, toWebhookId } from '@tally/billing-core';
import { type Kysely, sql } from 'kysely';
import type { AppWebhookReceiver, ReceivedDelivery } from './fakes/app-webhook-receiver';

// The outbound app webhooks' guarantees (docs/app-webhooks.md), checked against the database and
// what a real receiver got: one wallet.* message per ledger entry, none for a change that does not
// exist, every delivered message received, and one user's messages first received in the order
// written. Used after every chaos scenario and by the app-webhooks e2e tests.

export interface AppWebhookViolation {
  invariant: string;
  detail: string;
}

/**
 * Ledger entries without exactly one `wallet.*` message of their direction naming them (user,
 * reference, amount, balances), and `wallet.*` messages whose ledger entry does not exist (a
 * change that rolled back). Needs no receiver: true whether or not anything is delivered.
 */
export async function walletMessageViolations(db: Kysely<DB>, limit = 5): Promise<AppWebhookViolation[]> {
  const violations: AppWebhookViolation[] = [];
  // A lot's expiry (reason credits_expired) is announced as wallet.credits_expired, which names
  // its lot and the balance after, not before (ledger-entry-messages.ts).
  const mismatch = sql`coalesce(bool_or(m.type <> CASE WHEN l.reason = 'credits_expired' THEN 'wallet.credits_expired'
                                        WHEN l.amount > 0 THEN 'wallet.credited' ELSE 'wallet.debited' END
                    OR m.user_id <> l.user_id
                    OR (m.data ->> 'userId') <> l.user_id
                    OR (m.data ->> 'reference') <> l.reference
                    OR (m.data ->> 'amount')::bigint <> l.amount
                    OR (l.reason <> 'credits_expired' AND (m.data ->> 'balanceBefore')::bigint IS DISTINCT FROM l.balance_before)
                    OR (l.reason = 'credits_expired' AND (m.data ->> 'lotId') IS NULL)
                    OR (m.data ->> 'balanceAfter')::bigint <> l.balance_after), false)`;
  const { rows: entries } = await sql<{ id: number; reference: string; messages: number; mismatched: boolean }>`
    SELECT l.id, l.reference, count(m.id)::int AS messages,
           ${mismatch} AS mismatched
      FROM ledger_entries l
      LEFT JOIN app_webhook_messages m ON m.ledger_entry_id = l.id
     GROUP BY l.id, l.reference
    HAVING count(m.id) <> 1
        OR ${mismatch}
     ORDER BY l.id LIMIT ${limit}`.execute(db);
  for (const row of entries) {
    violations.push({
      invariant: 'one wallet.* message per ledger entry',
      detail: row.mismatched
        ? `ledger entry ${row.id} (${row.reference}): its message names another entry or direction`
        : `ledger entry ${row.id} (${row.reference}) has ${row.messages} wallet.* messages`,
    });
  }
  const { rows: orphans } = await sql<{ id: number; type: string; ledger_entry_id: number | null }>`
    SELECT m.id, m.type, m.ledger_entry_id FROM app_webhook_messages m
     WHERE m.type IN ('wallet.credited', 'wallet.debited', 'wallet.credits_expired')
       AND NOT EXISTS (SELECT 1 FROM ledger_entries l WHERE l.id = m.ledger_entry_id)
     ORDER BY m.id LIMIT ${limit}`.execute(db);
  for (const row of orphans) {
    violations.push({
      invariant: 'no message for a change that does not exist',
      detail: `message ${row.id} (${row.type}) announces ledger entry ${row.ledger_entry_id}, which does not exist`,
    });
  }
  return violations;
}

/**
 * Messages of the other types whose change does not exist: a studio message without its request
 * settled that way, a balance_low not right after a debit of that user that crossed below it, a
 * subscription.updated for a user without a subscription row; and settled studio requests
 * without exactly one studio message.
 */
async function flowMessageViolations(db: Kysely<DB>, limit = 5): Promise<AppWebhookViolation[]> {
  const violations: AppWebhookViolation[] = [];
  const orphan = (detail: string) =>
    violations.push({ invariant: 'no message for a change that does not exist', detail });
  const { rows: studio } = await sql<{ id: number; type: string; request: string }>`
    SELECT m.id, m.type, m.data ->> 'id' AS request FROM app_webhook_messages m
     WHERE m.type IN ('studio.request.completed', 'studio.request.failed')
       AND NOT EXISTS (SELECT 1 FROM studio_requests s
                        WHERE s.public_id::text = m.data ->> 'id' AND s.user_id = m.user_id
                          AND 'studio.request.' || s.status = m.type)
     ORDER BY m.id LIMIT ${limit}`.execute(db);
  for (const row of studio) orphan(`message ${row.id} (${row.type}) for studio request ${row.request}, not settled so`);
  const { rows: studioCounts } = await sql<{ public_id: string; status: string; messages: number }>`
    SELECT s.public_id::text, s.status, count(m.id)::int AS messages FROM studio_requests s
      LEFT JOIN app_webhook_messages m
        ON m.type IN ('studio.request.completed', 'studio.request.failed') AND m.data ->> 'id' = s.public_id::text
     WHERE s.status IN ('completed', 'failed')
     GROUP BY s.public_id, s.status HAVING count(m.id) <> 1 LIMIT ${limit}`.execute(db);
  for (const row of studioCounts) {
    violations.push({
      invariant: 'one studio message per settled generation',
      detail: `studio request ${row.public_id} (${row.status}) has ${row.messages} studio messages`,
    });
  }
  const { rows: low } = await sql<{ id: number; balance: string }>`
    SELECT m.id, m.data ->> 'balance' AS balance FROM app_webhook_messages m
      LEFT JOIN LATERAL (
        SELECT p.type, p.data FROM app_webhook_messages p
         WHERE p.user_id = m.user_id AND p.id < m.id ORDER BY p.id DESC LIMIT 1) prev ON true
     WHERE m.type = 'wallet.balance_low'
       AND (prev.type IS NULL OR prev.type NOT IN ('wallet.debited', 'wallet.credits_expired')
            OR (prev.data ->> 'balanceAfter') <> (m.data ->> 'balance')
            -- wallet.credits_expired names no balanceBefore: the balance after less the (negative) amount.
            OR coalesce((prev.data ->> 'balanceBefore')::bigint,
                        (prev.data ->> 'balanceAfter')::bigint - (prev.data ->> 'amount')::bigint)
               < (m.data ->> 'threshold')::bigint
            OR (m.data ->> 'balance')::bigint >= (m.data ->> 'threshold')::bigint)
     ORDER BY m.id LIMIT ${limit}`.execute(db);
  for (const row of low)
    orphan(`wallet.balance_low ${row.id} (balance ${row.balance}) follows no debit or expiry crossing it`);
  const { rows: subscriptions } = await sql<{ id: number; user_id: string }>`
    SELECT m.id, m.user_id FROM app_webhook_messages m
     WHERE m.type = 'subscription.updated'
       AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = m.user_id)
       AND NOT EXISTS (SELECT 1 FROM stripe_subscriptions s WHERE s.user_id = m.user_id)
     ORDER BY m.id LIMIT ${limit}`.execute(db);
  for (const row of subscriptions) orphan(`subscription.updated ${row.id} for ${row.user_id}, who has no subscription`);
  return violations;
}

export interface AppWebhookStats {
  messages: number;
  delivered: number;
  failed: number;
  /** Verified deliveries the receiver got (every attempt). */
  received: number;
  /** Messages the receiver accepted (2xx) more than once: at-least-once redeliveries. */
  acceptedTwice: number;
  byType: Record<string, number>;
}

/**
 * Every invariant of the outbound webhooks, once nothing is pending (the caller settles first,
 * with the receiver healthy):
 * - every message is delivered or failed; every ledger entry has exactly one wallet.* message
 *   (walletMessageViolations), no message announces a change that does not exist;
 * - every delivery the receiver verified is a message of the database, with its type, user and
 *   data exactly; nothing failed verification; every `delivered` message was accepted (2xx) at
 *   least once;
 * - per user, first deliveries come in the order written: each message is first received after
 *   every earlier message of its user was accepted (unless that one is `failed`: a failed message
 *   stops holding the later ones). Redeliveries under the same webhook-id may come at any time.
 */
export async function checkAppWebhookInvariants(
  db: Kysely<DB>,
  receiver: AppWebhookReceiver,
): Promise<{ violations: AppWebhookViolation[]; stats: AppWebhookStats }> {
  const violations: AppWebhookViolation[] = [];
  const fail = (invariant: string, detail: string) => violations.push({ invariant, detail });
  const messages = await db
    .selectFrom('app_webhook_messages')
    .select(['id', 'message_id', 'user_id', 'type', 'data', 'status', 'attempts'])
    .orderBy('id')
    .execute();
  const stats: AppWebhookStats = {
    messages: messages.length,
    delivered: 0,
    failed: 0,
    received: 0,
    acceptedTwice: 0,
    byType: {},
  };
  const unfinished = messages.filter((message) => message.status !== 'delivered' && message.status !== 'failed');
  if (unfinished.length > 0) {
    fail(
      'every message delivered or failed',
      `${unfinished.length} messages still ${[...new Set(unfinished.map((m) => m.status))].join('/')} (first: ${unfinished[0]?.id})`,
    );
  }
  violations.push(...(await walletMessageViolations(db)), ...(await flowMessageViolations(db)));

  const byWebhookId = new Map(messages.map((message) => [toWebhookId(message.message_id), message]));
  // The receiver's list is read after the messages: the system is never stopped for the check (the
  // credit-expiry sweeper runs on, and a lot may come due after the settle), so a message committed
  // after the read above may already have been delivered. Such a delivery is not a phantom: its
  // row is read again now, after the delivery; only a delivery whose row is not there after it
  // arrived announces a change that does not exist. Its message is compared as the others are,
  // and left out of the counts and the order (it came after every message read above).
  const deliveries = [...receiver.deliveries];
  const late = new Map(
    (await messagesWrittenAfterTheRead(db, deliveries, byWebhookId)).map((message) => [
      toWebhookId(message.message_id),
      message,
    ]),
  );
  stats.received = deliveries.filter((delivery) => !late.has(delivery.webhookId)).length;
  const received = new Map<string, ReceivedDelivery[]>();
  let unknown = 0;
  for (const delivery of deliveries) {
    const lateMessage = late.get(delivery.webhookId);
    if (lateMessage) {
      if (!isTheirMessage(delivery, lateMessage))
        fail('deliveries are their messages', mismatch(delivery, lateMessage));
      continue;
    }
    const message = byWebhookId.get(delivery.webhookId);
    if (!message) {
      unknown += 1;
      if (unknown <= 5) {
        fail(
          'no message for a change that does not exist',
          `the receiver got ${delivery.webhookId} (${delivery.body.type} ${JSON.stringify(delivery.body.data).slice(0, 160)}), which is no message of the database`,
        );
      }
      continue;
    }
    const list = received.get(delivery.webhookId) ?? [];
    list.push(delivery);
    received.set(delivery.webhookId, list);
    if (list.length === 1 && !isTheirMessage(delivery, message)) {
      fail('deliveries are their messages', mismatch(delivery, message));
    }
  }
  if (unknown > 5)
    fail('no message for a change that does not exist', `${unknown} deliveries of unknown messages in all`);
  if (receiver.rejected.length > 0) {
    fail('every delivery verifies', `${receiver.rejected.length} failed verification: ${receiver.rejected[0]?.error}`);
  }

  // Per user, in the order written.
  const firstAccepted = (list: ReceivedDelivery[] | undefined) =>
    list?.find((delivery) => delivery.answeredWith !== undefined && delivery.answeredWith < 300)?.seq;
  const byUser = new Map<string, typeof messages>();
  for (const message of messages) {
    byUser.set(message.user_id, [...(byUser.get(message.user_id) ?? []), message]);
    stats.byType[message.type] = (stats.byType[message.type] ?? 0) + 1;
  }
  let outOfOrder = 0;
  for (const [userId, ofUser] of byUser) {
    // The latest first acceptance of an earlier delivered message: a later message's first
    // arrival must come after it.
    let mustFollow = -1;
    let mustFollowId = 0;
    for (const message of ofUser) {
      const list = received.get(toWebhookId(message.message_id));
      const accepted = firstAccepted(list);
      if (message.status === 'delivered') {
        stats.delivered += 1;
        if (accepted === undefined) {
          fail(
            'delivered ⇒ received',
            `message ${message.id} (${message.type} of ${userId}) is delivered; the receiver never accepted it`,
          );
        }
      }
      if (message.status === 'failed') stats.failed += 1;
      if (
        (list?.filter((delivery) => delivery.answeredWith !== undefined && delivery.answeredWith < 300).length ?? 0) > 1
      ) {
        stats.acceptedTwice += 1;
      }
      const first = list?.[0]?.seq;
      if (first !== undefined && first < mustFollow) {
        outOfOrder += 1;
        if (outOfOrder <= 5) {
          fail(
            'per-user order',
            `${userId}: message ${message.id} (${message.type}) first arrived (#${first}) before message ${mustFollowId} was accepted (#${mustFollow})`,
          );
        }
      }
      if (message.status === 'delivered' && accepted !== undefined && accepted > mustFollow) {
        mustFollow = accepted;
        mustFollowId = message.id;
      }
    }
  }
  if (outOfOrder > 5) fail('per-user order', `${outOfOrder} messages out of order in all`);
  return { violations, stats };
}

type StoredMessage = { message_id: string; user_id: string; type: string; data: unknown };

/** Whether a delivery carries its stored message: type, user and data exactly. */
function isTheirMessage(delivery: ReceivedDelivery, message: StoredMessage): boolean {
  return (
    delivery.body.type === message.type &&
    delivery.body.data.userId === message.user_id &&
    isDeepStrictEqual(delivery.body.data, message.data)
  );
}

function mismatch(delivery: ReceivedDelivery, message: StoredMessage): string {
  return `${delivery.webhookId}: received ${delivery.body.type} ${JSON.stringify(delivery.body.data).slice(0, 160)}, stored ${message.type} ${JSON.stringify(message.data).slice(0, 160)}`;
}

/**
 * The rows, read now, of the deliveries whose message the first read did not hold: messages
 * committed (and delivered) between that read and the receiver's list being taken.
 */
async function messagesWrittenAfterTheRead(
  db: Kysely<DB>,
  deliveries: readonly ReceivedDelivery[],
  known: ReadonlyMap<string, unknown>,
): Promise<StoredMessage[]> {
  const uuids = [
    ...new Set(
      deliveries
        .filter((delivery) => !known.has(delivery.webhookId))
        .map((delivery) => parseWebhookId(delivery.webhookId))
        .filter((uuid): uuid is string => uuid !== undefined),
    ),
  ];
  // guard: webhook-checker-phantoms
  if (uuids.length === 0) return [];
  return db
    .selectFrom('app_webhook_messages')
    .select(['message_id', 'user_id', 'type', 'data'])
    .where('message_id', 'in', uuids)
    .execute();
}
