import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../db/schema';
import { NotConfiguredError } from '../errors';
import { createWalletIfMissing } from '../ledger/ensure-wallet';
import { customerMappingCtes } from '../payments/stripe-customer-mapping';
import type { StripeApi } from '../ports/stripe-api';
import { stripeStringAt } from '../provider-data/stripe-objects';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/** What `POST …/payment-methods/setup` gives the app: Stripe.js confirms the SetupIntent with it. */
export interface PaymentMethodSetup {
  clientSecret: string;
  customerId: string;
  setupIntentId: string;
}

/**
 * The Stripe idempotency key of a user's Customer: derived from the user (a hash: keys are at most
 * 255 characters, user ids may be as long), so two concurrent first setups make one Customer.
 */
function customerIdempotencyKey(userId: string): string {
  return `customer-${createHash('sha256').update(userId).digest('hex').slice(0, 48)}`;
}

/**
 * The user's Stripe Customer: the one their saved card belongs to, else the first one seen with
 * them (Checkout, a payment), else a new one (`metadata.user_id`), remembered at once.
 */
async function customerOf(db: Kysely<DB>, stripe: StripeApi, userId: string): Promise<string> {
  const known = await sql<{ customer_id: string }>`
    SELECT customer_id FROM (
      SELECT stripe_customer_id AS customer_id, 0 AS rank, saved_at AS at FROM saved_payment_methods WHERE user_id = ${userId}
      UNION ALL
      SELECT customer_id, 1, created_at FROM stripe_customers WHERE user_id = ${userId}) c
     ORDER BY rank, at LIMIT 1`.execute(db);
  const found = known.rows[0]?.customer_id;
  if (found) return found;
  const customer = await stripe.createCustomer({ userId }, { idempotencyKey: customerIdempotencyKey(userId) });
  const customerId = stripeStringAt(customer, 'id');
  if (customerId === null) throw new Error('Stripe returned a customer without id');
  await db.transaction().execute(async (trx) => {
    await createWalletIfMissing(trx, userId);
    await sql`WITH ${customerMappingCtes({ customerId, userId })} SELECT 1 FROM mapping`.execute(trx);
  });
  return customerId;
}

/**
 * `POST …/payment-methods/setup` (docs/auto-topup.md): creates (or reuses) the user's Stripe
 * Customer and a SetupIntent for off-session use; the app confirms it with Stripe.js and
 * `setup_intent.succeeded` saves the card (saveSetupIntent). No transaction is open during a
 * Stripe call. A retry makes another SetupIntent at most (no money moves until one succeeds).
 */
export async function setUpPaymentMethod(
  deps: { db: Kysely<DB>; stripe: StripeApi | undefined },
  userId: string,
): Promise<PaymentMethodSetup> {
  if (!deps.stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
  const customerId = await customerOf(deps.db, deps.stripe, userId);
  const intent = await deps.stripe.createSetupIntent(
    { customerId, userId },
    { idempotencyKey: `setup-${randomBytes(12).toString('hex')}` },
  );
  const setupIntentId = stripeStringAt(intent, 'id');
  const clientSecret = stripeStringAt(intent, 'client_secret');
  if (setupIntentId === null || clientSecret === null)
    throw new Error('Stripe returned a setup intent without id or client secret');
  return { clientSecret, customerId, setupIntentId };
}

export type SaveSetupIntentResult = { kind: 'saved' } | { kind: 'not-off-session' };

/**
 * `setup_intent.succeeded`, in the inbox's transaction: saves the intent's payment method as the
 * user's card for off-session charges (the latest succeeded setup wins) and remembers the customer
 * as the user's. Only a setup made for off-session use is saved. Idempotent.
 */
export async function saveSetupIntent(
  uow: UnitOfWork,
  input: { userId: string; setupIntentId: string; customerId: string; paymentMethodId: string; usage: string | null },
): Promise<SaveSetupIntentResult> {
  if (input.usage !== null && input.usage !== 'off_session') return { kind: 'not-off-session' };
  await createWalletIfMissing(uow.trx, input.userId);
  await sql`
    WITH ${customerMappingCtes({ customerId: input.customerId, userId: input.userId })},
    saved AS (
      INSERT INTO saved_payment_methods (user_id, stripe_customer_id, payment_method_id, setup_intent_id)
      VALUES (${input.userId}, ${input.customerId}, ${input.paymentMethodId}, ${input.setupIntentId})
      ON CONFLICT (user_id) DO UPDATE
        SET stripe_customer_id = EXCLUDED.stripe_customer_id, payment_method_id = EXCLUDED.payment_method_id,
            setup_intent_id = EXCLUDED.setup_intent_id, saved_at = now()
      RETURNING 1)
    SELECT (SELECT count(*) FROM saved) AS saved, (SELECT count(*) FROM mapping) AS mapped`.execute(uow.trx);
  return { kind: 'saved' };
}
