import { sql, type Transaction } from 'kysely';
import { GOOGLE_PLAY_ORDER_LOCK_NAMESPACE } from '../../db/advisory-locks';
import type { DB, GooglePlayPurchaseRow, GooglePlayVoidSeenBy, PaymentEnvironment } from '../../db/schema';
import { RetryLaterError } from '../../errors';

/**
 * Takes the order's lock until the transaction ends, or throws RetryLaterError when another
 * transaction holds it (a try-lock: a credit and a void of one order never wait on each other,
 * so no batch of events can close a cycle). Both the credit and every void take it first, so
 * whichever runs second sees what the first committed.
 */
export async function lockGooglePlayOrder(trx: Transaction<DB>, orderId: string): Promise<void> {
  const { rows } = await sql<{ locked: boolean }>`
    SELECT pg_try_advisory_xact_lock(${GOOGLE_PLAY_ORDER_LOCK_NAMESPACE}::int, hashtext(${orderId})) AS locked`.execute(
    trx,
  );
  if (rows[0]?.locked !== true) {
    throw new RetryLaterError(`Google Play order ${orderId} is being credited or voided by another transaction`);
  }
}

/** What a purchase's credit claims: the row written with the credit, in its transaction. */
export interface GooglePlayPurchaseClaim {
  orderId: string;
  purchaseToken: string;
  productId: string;
  packId: string;
  userId: string;
  quantity: number;
  tokens: number;
  ledgerReference: string;
  environment: PaymentEnvironment;
  inboxEventId: number;
}

/**
 * Claims the order for this event's credit (google_play_purchases, primary key on the order id):
 * answers the row that holds it, this event's or the one that credited it first. Its consume
 * columns are the durable row the consume loop works from once the transaction commits.
 */
export async function claimGooglePlayPurchase(
  trx: Transaction<DB>,
  claim: GooglePlayPurchaseClaim,
): Promise<Pick<GooglePlayPurchaseRow, 'inbox_event_id' | 'ledger_reference' | 'user_id'>> {
  const inserted = await trx
    .insertInto('google_play_purchases')
    .values({
      order_id: claim.orderId,
      purchase_token: claim.purchaseToken,
      product_id: claim.productId,
      pack_id: claim.packId,
      user_id: claim.userId,
      quantity: claim.quantity,
      tokens: claim.tokens,
      ledger_reference: claim.ledgerReference,
      environment: claim.environment,
      inbox_event_id: claim.inboxEventId,
    })
    .onConflict((oc) => oc.doNothing())
    .returning(['inbox_event_id', 'ledger_reference', 'user_id'])
    .executeTakeFirst();
  if (inserted) return inserted;
  const holder = await trx
    .selectFrom('google_play_purchases')
    .select(['inbox_event_id', 'ledger_reference', 'user_id'])
    .where((eb) => eb.or([eb('order_id', '=', claim.orderId), eb('purchase_token', '=', claim.purchaseToken)]))
    .executeTakeFirst();
  if (!holder) throw new Error(`Google Play order ${claim.orderId} conflicted but its row cannot be read`);
  return holder;
}

/** Whether Tally has seen the order voided (a notification or the daily pass). */
export async function isGooglePlayOrderVoided(trx: Transaction<DB>, orderId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('google_play_voided_purchases')
    .select('order_id')
    .where('order_id', '=', orderId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records a void once per order (the first sighting stays); answers whether this call recorded it. */
export async function recordGooglePlayVoid(
  trx: Transaction<DB>,
  voided: {
    orderId: string;
    purchaseToken: string;
    seenBy: GooglePlayVoidSeenBy;
    voidedAt: Date | null;
    inboxEventId: number | null;
  },
): Promise<boolean> {
  const inserted = await trx
    .insertInto('google_play_voided_purchases')
    .values({
      order_id: voided.orderId,
      purchase_token: voided.purchaseToken,
      seen_by: voided.seenBy,
      voided_at: voided.voidedAt,
      inbox_event_id: voided.inboxEventId,
    })
    .onConflict((oc) => oc.column('order_id').doNothing())
    .returning('order_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The credited purchase of an order, if Tally credited one. */
export function findGooglePlayPurchase(trx: Transaction<DB>, orderId: string) {
  return trx.selectFrom('google_play_purchases').selectAll().where('order_id', '=', orderId).executeTakeFirst();
}

/** Google's millisecond timestamps (strings of digits) as a Date; null when absent or unreadable. */
export function dateOfMillis(value: unknown): Date | null {
  const millis =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(millis) ? new Date(millis) : null;
}
