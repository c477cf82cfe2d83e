import type { Kysely, Transaction } from 'kysely';
import type { DB, PaymentRow } from '../../db/schema';

/** What claimApplePayment answers: the row that holds the transaction (this event's, or the first one's). */
export interface ApplePaymentHolder {
  id: number;
  user_id: string;
  inbox_event_id: number | null;
  ledger_reference: string;
  tokens_granted: number;
}

export interface ApplePaymentClaim {
  transactionId: string;
  userId: string;
  packId: string;
  tokens: number;
  amountMinor: number;
  currency: string;
  reference: string;
  inboxEventId: number;
}

/**
 * Records an App Store pack purchase as a `payments` row (provider 'apple', provider_payment_id
 * the transactionId), inside the crediting transaction: the unique (provider, provider_payment_id)
 * key is the fence that credits a transaction once, whatever notifications name it. The first
 * event to commit wins; a concurrent one waits on the key, then reads the winner's row.
 */
export async function claimApplePayment(trx: Transaction<DB>, claim: ApplePaymentClaim): Promise<ApplePaymentHolder> {
  const columns = ['id', 'user_id', 'inbox_event_id', 'ledger_reference', 'tokens_granted'] as const;
  // guard: apple-credit-once-per-transaction
  const inserted = await trx
    .insertInto('payments')
    .values({
      provider: 'apple',
      provider_payment_id: claim.transactionId,
      user_id: claim.userId,
      kind: 'token_pack',
      product_id: claim.packId,
      amount_minor: claim.amountMinor,
      currency: claim.currency,
      ledger_reference: claim.reference,
      tokens_granted: claim.tokens,
      inbox_event_id: claim.inboxEventId,
    })
    .onConflict((conflict) => conflict.columns(['provider', 'provider_payment_id']).doNothing())
    .returning(columns)
    .executeTakeFirst();
  if (inserted) return inserted;
  const holder = await trx
    .selectFrom('payments')
    .select(columns)
    .where('provider', '=', 'apple')
    .where('provider_payment_id', '=', claim.transactionId)
    .executeTakeFirst();
  if (!holder)
    throw new Error(`App Store transaction ${claim.transactionId} conflicted but its payment cannot be read`);
  return holder;
}

/** The App Store payment of a transaction, locked until the transaction ends (refunds run one at a time). */
export function lockApplePayment(trx: Transaction<DB>, transactionId: string): Promise<PaymentRow | undefined> {
  return trx
    .selectFrom('payments')
    .selectAll()
    .where('provider', '=', 'apple')
    .where('provider_payment_id', '=', transactionId)
    .forUpdate()
    .executeTakeFirst();
}

/** The App Store payment of a transaction, unlocked. */
export function findApplePayment(
  db: Kysely<DB> | Transaction<DB>,
  transactionId: string,
): Promise<PaymentRow | undefined> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('provider', '=', 'apple')
    .where('provider_payment_id', '=', transactionId)
    .executeTakeFirst();
}

/**
 * Apple's price (milliunits of the currency) in the currency's minor units, as `payments` keeps
 * amounts: 990 USD milliunits are 99 cents, 120000 JPY milliunits 120 yen. 0 when Apple sent no
 * price (older transactions); a currency Intl does not know is taken to have 2 decimals.
 */
export function appleAmountMinorOf(price: number | null | undefined, currency: string | null | undefined): number {
  if (price === null || price === undefined || !currency) return 0;
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // An unknown code: keep 2.
  }
  return Math.round((price * 10 ** digits) / 1000);
}
