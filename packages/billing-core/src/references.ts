/**
 * Deterministic ledger references. Every code path that can make the same grant builds its
 * reference with the same function, so the unique index on ledger_entries.reference turns a
 * second attempt into a no-op. These formats are part of the public contract: never change one.
 */
export const references = {
  revenuecatEvent: (eventId: string) => `revenuecat:event:${eventId}`,
  /** A refunded RevenueCat token pack, by the store transaction of the purchase. */
  revenuecatRefund: (transactionId: string) => `revenuecat:refund:${transactionId}`,
  stripeInvoice: (invoiceId: string) => `stripe:invoice:${invoiceId}`,
  stripePayment: (paymentIntentId: string) => `stripe:payment:${paymentIntentId}`,
  stripeInstallment: (scheduleRowId: number | string) => `stripe:installment:${scheduleRowId}`,
  topup: (topupId: string) => `topup:${topupId}`,
  /** The refund that completes a one-off pack's refund (all of it at once, or the rest after partial ones). */
  stripeRefund: (chargeId: string) => `stripe:refund:${chargeId}`,
  /**
   * A partial refund of a one-off pack: the step that brought the charge's cumulative
   * `amount_refunded` to this amount (each refund moves it, so it names the refund).
   */
  stripePartialRefund: (chargeId: string, amountRefundedMinor: number) =>
    `stripe:refund:${chargeId}:${amountRefundedMinor}`,
  studioDebit: (requestId: string) => `studio:${requestId}:debit`,
  studioRefund: (requestId: string) => `studio:${requestId}:refund`,
} as const;
