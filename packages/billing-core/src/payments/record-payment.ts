import { precompiledSql } from '@tally/platform/db';
import { sql } from 'kysely';
import type { LotCategory, PaymentKind, PaymentRow } from '../db/schema';
import { ensureWallet } from '../ledger/ensure-wallet';
import type { LotExpiry } from '../ledger/lots';
import { type PostLedgerEntryResult, postLedgerEntry } from '../ledger/post-ledger-entry';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

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
}

/** `paymentId`: the payment row's id (this grant's, or the one recorded before). */
export type RecordPaymentResult =
  | { kind: 'recorded'; paymentId: number; ledger: PostLedgerEntryResult }
  | { kind: 'already-recorded'; paymentId: number; ledger: PostLedgerEntryResult };

/**
 * Records one Stripe payment, credits its tokens and queues its confirmation email, all in the
 * caller's transaction, so payment, ledger row and email row commit together or not at all.
 *
 * Idempotent: the payment is fenced by its unique provider payment id, the credit by its ledger
 * reference, the email by its unique payment id. Throws LedgerReferenceConflictError when the
 * reference already credits a different user or amount.
 */
export async function recordPayment(uow: UnitOfWork, grant: PaymentGrant): Promise<RecordPaymentResult> {
  const { trx } = uow;
  await ensureWallet(uow, grant.userId);
  const ledger = await postLedgerEntry(uow, {
    userId: grant.userId,
    reference: grant.ledgerReference,
    amount: grant.tokens,
    reason: grant.ledgerReason,
    lots: { kind: 'credit', ...grant.lot },
    inboxEventId: grant.inboxEventId,
  });
  // The payment and its email row in one statement: the email row exists only for a payment
  // this statement inserted (a redelivery inserts neither). A template, not the query builder:
  // this runs once per credited payment on the hot path.
  // Only the id comes back: every column of a result costs the client a field to describe and parse.
  const inserted = (
    await insertPaymentSql(trx, {
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
    })
  ).rows[0];
  if (!inserted) {
    const payment = await trx
      .selectFrom('payments')
      .select('id')
      .where('provider', '=', 'stripe')
      .where('provider_payment_id', '=', grant.providerPaymentId)
      .executeTakeFirstOrThrow();
    return { kind: 'already-recorded', paymentId: payment.id, ledger };
  }
  return { kind: 'recorded', paymentId: inserted.id, ledger };
}

/** The insert's slots: the grant's payment fields and its email's subject and text. */
type PaymentInsert = Omit<PaymentGrant, 'ledgerReason' | 'email' | 'lot'> & PaymentGrant['email'];

const insertPaymentSql = precompiledSql<PaymentInsert, Pick<PaymentRow, 'id'>>(
  (s) => sql`
      WITH payment AS (
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
      SELECT id FROM payment`,
);
