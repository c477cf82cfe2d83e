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
  /** A refund taking back a one-off pack's tokens; keyed by the refunded charge. */
  stripeRefund: (chargeId: string) => `stripe:refund:${chargeId}`,
  studioDebit: (requestId: string) => `studio:${requestId}:debit`,
  studioRefund: (requestId: string) => `studio:${requestId}:refund`,
} as const;
