import { sql } from 'kysely';
import type { InboxEventRow } from '../../../db/schema';
import { InvalidEventError } from '../../../errors';
import { lockWalletFunds } from '../../../holds/lock-wallet-funds';
import { fileEventUnderUser } from '../../../inbox/file-event-under-user';
import { type HandlerResult, ignored, processed, retryLater } from '../../../inbox/inbox-handler';
import { postGiveBack } from '../../../ledger/give-back-tokens';
import type { AppleTransaction } from '../../../provider-data/apple-signed-data';
import { references } from '../../../references';
import { takeBackPaymentTokens, tokensAccountedOf } from '../../../refunds/take-back-payment-tokens';
import { releaseTakeBackShortfall } from '../../../refunds/take-back-shortfalls';
import { findUserByAppleAccountToken } from '../../../stores/store-accounts';
import type { UnitOfWork } from '../../../unit-of-work/unit-of-work';
import { lockApplePayment } from '../apple-payments';

/**
 * The pack's payment, locked, with the event filed under its user; or what to answer without one:
 * a transaction naming no token Tally gave was never credited (nothing to take or give back);
 * otherwise its ONE_TIME_CHARGE has not been applied yet, and the refund waits for it (bounded by
 * the engine's maximum wait).
 */
async function lockPaymentOrWait(uow: UnitOfWork, transaction: AppleTransaction, row: InboxEventRow) {
  const payment = await lockApplePayment(uow.trx, transaction.transactionId);
  if (payment) {
    await fileEventUnderUser(uow.trx, row.id, payment.user_id);
    return { payment };
  }
  const userId = await findUserByAppleAccountToken(uow.trx, transaction.appAccountToken);
  if (userId === null) {
    return {
      answer: ignored(
        'unknown_account_token',
        `transaction ${transaction.transactionId} names no appAccountToken Tally gave: it was never credited`,
      ),
    };
  }
  return {
    answer: retryLater(`the purchase of App Store transaction ${transaction.transactionId} is not credited yet`),
  };
}

/**
 * `REFUND` of a token pack: takes back what its payment still has granted (the pack, less what
 * earlier take-backs accounted for) under `apple:refund:{transactionId}:{revocationDate}`, never
 * below zero: the rest is debt (take_back_shortfalls, source `apple_refund`). Once per refund: the
 * apple_refunds row (transaction, revocationDate) is written first and is the fence; the
 * reference is a second one. A refund of a purchase not credited yet waits for it.
 */
export async function refundApplePack(
  uow: UnitOfWork,
  transaction: AppleTransaction,
  row: InboxEventRow,
): Promise<HandlerResult> {
  const { trx } = uow;
  const { transactionId } = transaction;
  const revokedAtMs = transaction.revocationDate;
  if (revokedAtMs === null || revokedAtMs === undefined) {
    throw new InvalidEventError(`REFUND of transaction ${transactionId} without revocationDate`);
  }
  const locked = await lockPaymentOrWait(uow, transaction, row);
  if (!locked.payment) return locked.answer;
  const { payment } = locked;
  // A hold that lapsed unsettled on a voided lot left tokens there that are not the user's: settle
  // lapsed holds first, so the take-back never takes them as the user's (docs/lots.md "Voids").
  await lockWalletFunds(uow, payment.user_id);
  const owed = Math.max(0, payment.tokens_granted - tokensAccountedOf(payment));
  // guard: apple-refund-fence
  const refund = await trx
    .insertInto('apple_refunds')
    .values({
      transaction_id: transactionId,
      revoked_at: new Date(revokedAtMs),
      payment_id: payment.id,
      user_id: payment.user_id,
      revocation_reason: transaction.revocationReason ?? null,
      tokens_owed: owed,
      refund_inbox_event_id: row.id,
    })
    .onConflict((conflict) => conflict.columns(['transaction_id', 'revoked_at']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!refund) {
    return processed('already_refunded', `the refund of App Store transaction ${transactionId} was already applied`);
  }
  const reference = references.appleRefund(transactionId, revokedAtMs);
  const { taken, shortfall } = await takeBackPaymentTokens(uow, {
    payment,
    owed,
    reference,
    reason: 'token_pack_refund',
    inboxEventId: row.id,
    source: { source: 'apple_refund', sourceId: String(refund.id) },
  });
  await trx.updateTable('apple_refunds').set({ tokens_taken: taken }).where('id', '=', refund.id).execute();
  await trx
    .updateTable('payments')
    .set({ status: 'refunded', refunded_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', payment.id)
    .execute();
  if (owed === 0) return processed('already_refunded', `payment ${transactionId} had nothing left to take back`);
  const detail = `took back ${taken} of ${owed} tokens owed under ${reference}`;
  return shortfall > 0
    ? processed('partially_refunded', `${detail}; shortfall ${shortfall} (already spent) recorded as debt`)
    : processed('refunded', detail);
}

/**
 * `REFUND_REVERSED`: Apple took its refund back, so Tally does too, as Stripe's reinstated
 * chargeback does: the latest refund of the transaction not yet reversed gives back what it took
 * (its `tokens_taken`, which counts what later settled its debt) under `…:reversed`, returned to
 * the lots the take-back drew from, and forgives what of its debt is still open. Once: the row's
 * `reversed_at` is the fence. A reversal that arrives before its refund waits for it.
 */
export async function reverseAppleRefund(
  uow: UnitOfWork,
  transaction: AppleTransaction,
  row: InboxEventRow,
): Promise<HandlerResult> {
  const { trx } = uow;
  const { transactionId } = transaction;
  const locked = await lockPaymentOrWait(uow, transaction, row);
  if (!locked.payment) return locked.answer;
  const { payment } = locked;
  const refunds = await trx
    .selectFrom('apple_refunds')
    .selectAll()
    .where('transaction_id', '=', transactionId)
    .orderBy('revoked_at', 'desc')
    .forUpdate()
    .execute();
  // guard: apple-reversal-once
  const refund = refunds.find((candidate) => candidate.reversed_at === null);
  if (!refund) {
    if (refunds.length > 0) {
      return processed('refund_reversed', `every refund of App Store transaction ${transactionId} is already reversed`);
    }
    return retryLater(`no refund of App Store transaction ${transactionId} is recorded yet`);
  }
  await lockWalletFunds(uow, payment.user_id);
  const revokedAtMs = refund.revoked_at.getTime();
  const givenBack = refund.tokens_taken;
  const forgiven = refund.shortfall;
  const reversedReference = references.appleRefundReversed(transactionId, revokedAtMs);
  if (givenBack > 0) {
    await postGiveBack(uow, {
      userId: payment.user_id,
      reference: reversedReference,
      amount: givenBack,
      reason: 'token_pack_refund_reversed',
      of: references.appleRefund(transactionId, revokedAtMs),
      inboxEventId: row.id,
    });
  }
  await trx
    .updateTable('apple_refunds')
    .set({ tokens_given_back: givenBack, reversed_at: sql`now()`, reversed_inbox_event_id: row.id })
    .where('id', '=', refund.id)
    .execute();
  await trx
    .updateTable('payments')
    .set({
      tokens_refunded: sql`tokens_refunded - ${givenBack}`,
      refund_shortfall: sql`refund_shortfall - ${forgiven}`,
      status: 'succeeded',
      updated_at: sql`now()`,
    })
    .where('id', '=', payment.id)
    .execute();
  await releaseTakeBackShortfall(
    uow,
    { source: 'apple_refund', sourceId: String(refund.id), reference: reversedReference, reason: 'refund_reversed' },
    forgiven,
  );
  return processed(
    'refund_reversed',
    `gave back ${givenBack} tokens under ${reversedReference}${forgiven > 0 ? `; forgave ${forgiven} of its debt` : ''}`,
  );
}
