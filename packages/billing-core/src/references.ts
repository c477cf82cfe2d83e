/**
 * The prefixes of the ledger references: code that matches references by family (reconcile's
 * SQL) reads them from here, never as a string literal.
 */
export const referencePrefixes = {
  revenuecatEvent: 'revenuecat:event:',
  revenuecatRefund: 'revenuecat:refund:',
  /** Every Stripe reference starts with this. */
  stripe: 'stripe:',
  stripeInvoice: 'stripe:invoice:',
  stripePayment: 'stripe:payment:',
  stripeInstallment: 'stripe:installment:',
  /** Both a completing refund (`stripe:refund:{chargeId}`) and a partial one (`…:{amount}`). */
  stripeRefund: 'stripe:refund:',
  /** A chargeback (`stripe:dispute:{id}`) and its reinstatement (`…:reinstated`). */
  stripeDispute: 'stripe:dispute:',
  topup: 'topup:',
  /** An auto top-up attempt's reference (`autotopup:{attemptId}`): its top-up's, and Stripe's idempotency key. */
  autoTopup: 'autotopup:',
  studio: 'studio:',
  grant: 'grant:',
  adminGrant: 'admin:grant:',
  lot: 'lot:',
  debit: 'debit:',
  usage: 'usage:',
  hold: 'hold:',
  debt: 'debt:',
  /** An App Store purchase (`apple:transaction:{transactionId}`). */
  appleTransaction: 'apple:transaction:',
  /** An App Store refund (`apple:refund:{transactionId}:{revokedAtMs}`) and its reversal (`…:reversed`). */
  appleRefund: 'apple:refund:',
  /** A Google Play one-time purchase's credit (`google:order:{orderId}`). */
  googleOrder: 'google:order:',
  /** What a voided Google Play purchase took back (`google:voided:{orderId}`). */
  googleVoided: 'google:voided:',
} as const;

/**
 * Deterministic ledger references. Every code path that can make the same grant builds its
 * reference with the same function, so the unique index on ledger_entries.reference turns a
 * second attempt into a no-op. These formats are part of the public contract: never change one.
 */
export const references = {
  revenuecatEvent: (eventId: string) => `${referencePrefixes.revenuecatEvent}${eventId}`,
  /** A refunded RevenueCat token pack, by the store transaction of the purchase. */
  revenuecatRefund: (transactionId: string) => `${referencePrefixes.revenuecatRefund}${transactionId}`,
  stripeInvoice: (invoiceId: string) => `${referencePrefixes.stripeInvoice}${invoiceId}`,
  stripePayment: (paymentIntentId: string) => `${referencePrefixes.stripePayment}${paymentIntentId}`,
  stripeInstallment: (scheduleRowId: number | string) => `${referencePrefixes.stripeInstallment}${scheduleRowId}`,
  topup: (topupId: string) => `${referencePrefixes.topup}${topupId}`,
  /** The refund that completes a one-off pack's refund (all of it at once, or the rest after partial ones). */
  stripeRefund: (chargeId: string) => `${referencePrefixes.stripeRefund}${chargeId}`,
  /**
   * A partial refund of a one-off pack: the step that brought the charge's cumulative
   * `amount_refunded` to this amount (each refund moves it, so it names the refund).
   */
  stripePartialRefund: (chargeId: string, amountRefundedMinor: number) =>
    `${referencePrefixes.stripeRefund}${chargeId}:${amountRefundedMinor}`,
  /** What a chargeback took back when Stripe withdrew the disputed funds. */
  stripeDispute: (disputeId: string) => `${referencePrefixes.stripeDispute}${disputeId}`,
  /** What a chargeback gave back (exactly what it took) when Stripe reinstated the funds. */
  stripeDisputeReinstated: (disputeId: string) => `${referencePrefixes.stripeDispute}${disputeId}:reinstated`,
  studioDebit: (requestId: string) => `${referencePrefixes.studio}${requestId}:debit`,
  studioRefund: (requestId: string) => `${referencePrefixes.studio}${requestId}:refund`,
  /**
   * The part of a failed generation's refund that settles a take-back shortfall recorded while
   * its debit was in flight (negative; see recoverShortfallsFromStudioRefund).
   */
  studioRefundRecovered: (requestId: string) => `${referencePrefixes.studio}${requestId}:refund:recovered`,
  /** A grant from the app (`POST /v1/users/{userId}/grants`), by the app's reference. */
  grant: (reference: string) => `${referencePrefixes.grant}${reference}`,
  /** A grant by support (admin API, console, CLI), by its reference (given or generated). */
  adminGrant: (reference: string) => `${referencePrefixes.adminGrant}${reference}`,
  /**
   * What a void of a lot took back: its first take `lot:{lotId}:voided`; tokens that come back to
   * the voided lot later (a hold released, a give-back, a second void) `lot:{lotId}:voided:{n}`,
   * n = 2, 3, … (the lot's `void_takes` + 1, under the wallet lock).
   */
  lotVoided: (lotId: number | string, n = 1) =>
    n === 1 ? `${referencePrefixes.lot}${lotId}:voided` : `${referencePrefixes.lot}${lotId}:voided:${n}`,
  /**
   * The sweeper's expiry of what a lot had left at its expiresAt (reason `credits_expired`). The
   * first expiry of a lot is `lot:{lotId}:expired`; tokens a give-back returns to the expired lot
   * later expire at the next sweep under `lot:{lotId}:expired:{n}`, n = 2, 3, … (the lot's n-th
   * expiry entry, counted from its draws under the wallet lock).
   */
  /** A priced use of a catalog feature (`POST /v1/users/{userId}/usage`), by the app's reference (docs/features.md). */
  usage: (reference: string) => `${referencePrefixes.usage}${reference}`,
  /** An app's debit (`POST /v1/users/{userId}/debits`), by the app's reference. */
  debit: (reference: string) => `${referencePrefixes.debit}${reference}`,
  /** A hold's capture: the one debit of what it captured (`POST .../holds/{id}/capture`). */
  holdCapture: (holdId: string) => `${referencePrefixes.hold}${holdId}:capture`,
  /**
   * A capture of a hold by estimate past what the hold reserved: the excess, taken from what was
   * available (docs/features.md).
   */
  holdExcess: (holdId: string) => `${referencePrefixes.hold}${holdId}:excess`,
  /**
   * What a hold frees when it ends (release, capture for less, expiry) that settles a take-back
   * shortfall recorded while it was active (negative; see recoverShortfallsFromHold).
   */
  holdReleaseRecovered: (holdId: string) => `${referencePrefixes.hold}${holdId}:release:recovered`,
  /** What a paid credit settled of the wallet's debt, taken from the credit's lot (docs/debt.md). */
  debtSettled: (creditReference: string) => `${referencePrefixes.debt}${creditReference}:settled`,
  /** A token pack bought through StoreKit, by its App Store transaction (docs/stores-apple.md). */
  appleTransaction: (transactionId: string) => `${referencePrefixes.appleTransaction}${transactionId}`,
  /**
   * What an App Store refund took back: the transaction and its revocationDate (ms), so a refund
   * after a reversal is a refund of its own.
   */
  appleRefund: (transactionId: string, revokedAtMs: number) =>
    `${referencePrefixes.appleRefund}${transactionId}:${revokedAtMs}`,
  /** What REFUND_REVERSED gave back of that refund. */
  appleRefundReversed: (transactionId: string, revokedAtMs: number) =>
    `${referencePrefixes.appleRefund}${transactionId}:${revokedAtMs}:reversed`,
  /** A Google Play one-time product purchase, credited once per order (docs/stores-google-play.md). */
  googleOrder: (orderId: string) => `${referencePrefixes.googleOrder}${orderId}`,
  /** What a voided Google Play purchase took back from its lot (then debt), once per order. */
  googleVoided: (orderId: string) => `${referencePrefixes.googleVoided}${orderId}`,
  lotExpired: (lotId: number | string, n = 1) =>
    n === 1 ? `${referencePrefixes.lot}${lotId}:expired` : `${referencePrefixes.lot}${lotId}:expired:${n}`,
} as const;

/**
 * Lot sources that are no ledger reference: the lot was created by moving tokens between lots,
 * not by a ledger entry (docs/lots.md). The balance does not change, so no entry is posted.
 */
export const lotSources = {
  /** The lot a subscription lot's rollover creates when it expires (at most its rolloverMax tokens). */
  rollover: (lotId: number | string) => `${referencePrefixes.lot}${lotId}:rollover`,
} as const;
