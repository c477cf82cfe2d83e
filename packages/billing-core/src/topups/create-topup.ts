import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { TokenPack } from '../catalog/catalog-schema';
import type { DB, TopupRow } from '../db/schema';
import { BillingError, NotConfiguredError } from '../errors';
import { advanceIdempotencyKey } from '../idempotency/advance-idempotency-key';
import { finishIdempotencyKey } from '../idempotency/finish-idempotency-key';
import type { IdempotencyBinding, IdempotencyClaim } from '../idempotency/idempotency-types';
import { createWalletIfMissing } from '../ledger/ensure-wallet';
import type { StripeApi } from '../ports/stripe-api';
import { stripeStringAt } from '../provider-data/stripe-objects';

/** The pack asked for does not exist or cannot be sold through Stripe. */
export class UnknownTokenPackError extends BillingError {
  constructor(packId: string) {
    super('unknown_pack', `token pack ${packId} is not sold through Stripe`, { retryable: false });
  }
}

/** A fresh top-up reference: `tu_` and 24 random hex characters. */
export function newTopupReference(): string {
  return `tu_${randomBytes(12).toString('hex')}`;
}

/** What a started top-up gives the browser to pay (and its intent id, which the answer leaves out). */
export interface StartedTopup {
  reference: string;
  clientSecret: string;
  status: 'pending';
  paymentIntentId: string;
}

/** Commits the pending row; with a claim, the key's recovery point moves to `recharge_created` in the same transaction. */
async function insertPendingTopup(
  db: Kysely<DB>,
  input: { userId: string; pack: TokenPack & { amountMinor: number; currency: string } },
  claim: IdempotencyClaim | undefined,
): Promise<TopupRow> {
  const reference = newTopupReference();
  return db.transaction().execute(async (trx) => {
    await createWalletIfMissing(trx, input.userId);
    const row = await trx
      .insertInto('topups')
      .values({
        reference,
        user_id: input.userId,
        pack_id: input.pack.id,
        tokens: input.pack.tokens,
        amount_minor: input.pack.amountMinor,
        currency: input.pack.currency,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (claim)
      await advanceIdempotencyKey(trx, claim, { recoveryPoint: 'recharge_created', topupReference: reference });
    return row;
  });
}

/**
 * Starts a top-up: a pending row with a generated reference is committed first, then a Stripe
 * PaymentIntent is created (outside any transaction) carrying user_id, pack_id and
 * topup_reference in its metadata, with the idempotency key `topup-{reference}` so a retried
 * create returns the same intent. Returns what the browser needs to pay. `userId` is the
 * canonical user (resolveUserId): the row, the intent's metadata and so the credit are its.
 *
 * With `idempotency` (the API's `Idempotency-Key`), the steps are recovery points of the key:
 * the row commits with `recharge_created` (and its reference), the intent id with the answer
 * (`finished`). A claim resumed at `recharge_created` (an earlier attempt's Stripe call timed
 * out, or its process died) creates no second row: it asks Stripe again for that row's intent,
 * with the same parameters and Stripe idempotency key, so Stripe makes one PaymentIntent.
 * Throws NotConfiguredError, UnknownTokenPackError, the Stripe port's errors, and
 * IdempotencyLeaseLostError when another attempt took the key over.
 */
export async function createTopup(
  deps: { db: Kysely<DB>; catalog: Catalog; stripe: StripeApi | undefined },
  input: { userId: string; packId: string },
  idempotency?: IdempotencyBinding<StartedTopup>,
): Promise<StartedTopup> {
  if (!deps.stripe) throw new NotConfiguredError('the Stripe API (STRIPE_SECRET_KEY)');
  const pack = deps.catalog.findTokenPackById(input.packId);
  if (!pack || pack.amountMinor === undefined || pack.currency === undefined)
    throw new UnknownTokenPackError(input.packId);
  const claim = idempotency?.claim;
  const resumed =
    claim?.recoveryPoint === 'recharge_created' && claim.topupReference !== null
      ? await deps.db.selectFrom('topups').selectAll().where('reference', '=', claim.topupReference).executeTakeFirst()
      : undefined;
  const topup =
    resumed ??
    (await insertPendingTopup(
      deps.db,
      { userId: input.userId, pack: { ...pack, amountMinor: pack.amountMinor, currency: pack.currency } },
      claim,
    ));
  const { reference } = topup;
  const intent = await deps.stripe.createPaymentIntent(
    {
      amountMinor: topup.amount_minor,
      currency: topup.currency,
      metadata: { user_id: topup.user_id, pack_id: topup.pack_id, topup_reference: reference },
      description: `Tally top-up ${reference}`,
    },
    { idempotencyKey: `topup-${reference}` },
  );
  const paymentIntentId = stripeStringAt(intent, 'id');
  const clientSecret = stripeStringAt(intent, 'client_secret');
  if (paymentIntentId === null || clientSecret === null)
    throw new Error('Stripe returned a payment intent without id or client secret');
  const started: StartedTopup = { reference, clientSecret, status: 'pending', paymentIntentId };
  const recordIntent = (db: Kysely<DB>) =>
    db
      .updateTable('topups')
      .set({ payment_intent_id: paymentIntentId, updated_at: sql`now()` })
      .where('reference', '=', reference)
      .where('payment_intent_id', 'is', null)
      .execute();
  if (idempotency) {
    await deps.db.transaction().execute(async (trx) => {
      await recordIntent(trx);
      await finishIdempotencyKey(trx, idempotency.claim, idempotency.answer(started), { strict: true });
    });
  } else {
    await recordIntent(deps.db);
  }
  return started;
}
