import { precompiledSql } from '@tally/platform/db';
import { sql } from 'kysely';
import type { LotCategory, PaymentKind } from '../db/schema';
import { ensureWalletCtes, markWalletEnsured } from '../ledger/ensure-wallet';
import type { LotExpiry } from '../ledger/lots';
import { type LedgerPosting, type PostLedgerEntryResult, postLedgerEntry } from '../ledger/post-ledger-entry';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';
import { customerMappingCtes, customerMappingOf, type RememberStripeCustomerResult } from './stripe-customer-mapping';

export interface PaymentGrant {
  providerPaymentId: string;
  userId: string;
  kind: PaymentKind;
  productId: string;
  amountMinor: number;
  currency: string;
  /** The grant's deterministic reference (the same on every path that can make it). */
  ledgerReference: string;
  tokens: number;
  ledgerReason: string;
  /** The lot the credit creates (docs/lots.md): packs and top-ups never expire. */
  lot: { category: LotCategory; expiresAt: LotExpiry; rolloverMax?: number };
  customerEmail: string | null;
  inboxEventId: number | null;
  /** The confirmation email's subject and text (an outbox row, sent after commit). */
  email: { subject: string; text: string };
  /**
   * The Stripe customer that paid, remembered as the user's (the first mapping wins) in the
   * payment's own statement, as rememberStripeCustomer would; null or absent: none.
   */
  stripeCustomerId?: string | null;
}

/**
 * `paymentId`: the payment row's id (this grant's, or the one recorded before); `customer`: what
 * remembering `stripeCustomerId` did (`none` without one).
 */
export type RecordPaymentResult = RecordedPayment & { ledger: PostLedgerEntryResult };

/** recordPaymentBeforeCredit's answer: the payment row and the credit still to post. */
export type RecordedPayment = {
  kind: 'recorded' | 'already-recorded';
  paymentId: number;
  customer: RememberStripeCustomerResult;
  /** The grant's credit (its reference, tokens and lot), for the caller to post in the same unit. */
  credit: LedgerPosting;
};

/**
 * Records one Stripe payment, credits its tokens and queues its confirmation email, all in the
 * caller's transaction, so payment, ledger row and email row commit together or not at all.
 *
 * Idempotent: the payment is fenced by its unique provider payment id, the credit by its ledger
 * reference, the email by its unique payment id. Throws LedgerReferenceConflictError when the
 * reference already credits a different user or amount.
 */
export async function recordPayment(uow: UnitOfWork, grant: PaymentGrant): Promise<RecordPaymentResult> {
  const recorded = await recordPaymentBeforeCredit(uow, grant);
  return { ...recorded, ledger: await postLedgerEntry(uow, recorded.credit) };
}

/**
 * recordPayment without its credit: the payment, its email row and the customer's mapping, and
 * the credit to post (an inbox handler hands it to the engine with postThen, which posts a
 * batch's credits together). The caller must post `credit` in the same unit of work.
 */
export async function recordPaymentBeforeCredit(uow: UnitOfWork, grant: PaymentGrant): Promise<RecordedPayment> {
  const { trx } = uow;
  // One statement before the posting: the user and its empty wallet if missing, the payment and
  // its email row (the email row exists only for a payment this statement inserted: a redelivery
  // inserts neither) and, with a customer, its mapping. A template, not the query builder: this
  // runs once per credited payment on the hot path. Only ids come back: every column of a result
  // costs the client a field to describe and parse.
  const values: PaymentInsert = {
    providerPaymentId: grant.providerPaymentId,
    userId: grant.userId,
    kind: grant.kind,
    productId: grant.productId,
    amountMinor: grant.amountMinor,
    currency: grant.currency,
    ledgerReference: grant.ledgerReference,
    tokens: grant.tokens,
    customerEmail: grant.customerEmail,
    inboxEventId: grant.inboxEventId,
    subject: grant.email.subject,
    text: grant.email.text,
  };
  const customerId = grant.stripeCustomerId ?? null;
  const row =
    customerId === null
      ? (await insertPaymentSql(trx, values)).rows[0]
      : (await insertPaymentAndCustomerSql(trx, { ...values, customerId })).rows[0];
  if (!row) throw new Error(`the payment statement for ${grant.providerPaymentId} answered no row`);
  markWalletEnsured(uow, grant.userId);
  const customer: RememberStripeCustomerResult =
    customerId === null
      ? { kind: 'none' }
      : await customerMappingOf(
          trx,
          customerId,
          grant.userId,
          row.mapping_user_id === null
            ? undefined
            : { user_id: row.mapping_user_id, inserted: row.mapping_inserted === true },
        );
  const credit: LedgerPosting = {
    userId: grant.userId,
    reference: grant.ledgerReference,
    amount: grant.tokens,
    reason: grant.ledgerReason,
    lots: { kind: 'credit', ...grant.lot },
    inboxEventId: grant.inboxEventId,
    // A paid credit: it settles the wallet's debt first (docs/debt.md).
    settlesDebt: true,
  };
  if (row.payment_id === null) {
    const payment = await trx
      .selectFrom('payments')
      .select('id')
      .where('provider', '=', 'stripe')
      .where('provider_payment_id', '=', grant.providerPaymentId)
      .executeTakeFirstOrThrow();
    return { kind: 'already-recorded', paymentId: payment.id, customer, credit };
  }
  return { kind: 'recorded', paymentId: row.payment_id, customer, credit };
}

/** The insert's slots: the grant's payment fields and its email's subject and text. */
type PaymentInsert = Omit<PaymentGrant, 'ledgerReason' | 'email' | 'lot'> & PaymentGrant['email'];

/** The statement's one row: the payment inserted (null: recorded before) and the customer's mapping. */
type PaymentStatementRow = {
  payment_id: number | null;
  mapping_user_id: string | null;
  mapping_inserted: boolean | null;
};

function paymentStatement(withCustomer: boolean) {
  return precompiledSql<PaymentInsert & { customerId?: string }, PaymentStatementRow>(
    (s) => sql`
      WITH ${ensureWalletCtes(s.userId)},
      payment AS (
        INSERT INTO payments (provider_payment_id, user_id, kind, product_id, amount_minor, currency,
                              ledger_reference, tokens_granted, customer_email, inbox_event_id)
        VALUES (${s.providerPaymentId}, ${s.userId}, ${s.kind}, ${s.productId},
                ${s.amountMinor}, ${s.currency}, ${s.ledgerReference}, ${s.tokens},
                ${s.customerEmail}, ${s.inboxEventId})
        ON CONFLICT (provider, provider_payment_id) DO NOTHING
        RETURNING id, user_id, customer_email),
      email AS (
        INSERT INTO email_outbox (payment_id, user_id, to_address, subject, body)
        SELECT id, user_id, customer_email, ${s.subject}, ${s.text} FROM payment
        ON CONFLICT (payment_id) DO NOTHING)
      ${
        withCustomer
          ? sql`, ${customerMappingCtes({ customerId: s.customerId, userId: s.userId })}
      SELECT (SELECT id FROM payment) AS payment_id, (SELECT user_id FROM mapping) AS mapping_user_id,
             (SELECT inserted FROM mapping) AS mapping_inserted`
          : sql`SELECT (SELECT id FROM payment) AS payment_id, NULL::text AS mapping_user_id,
             NULL::boolean AS mapping_inserted`
      }`,
  );
}
const insertPaymentSql = paymentStatement(false);
const insertPaymentAndCustomerSql = paymentStatement(true);
