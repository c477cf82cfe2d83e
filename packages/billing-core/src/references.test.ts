import { referencePrefixes, references } from './references';

describe('ledger references', () => {
  it('keep their documented formats, each built on its exported prefix', () => {
    const built = {
      revenuecatEvent: references.revenuecatEvent('ev1'),
      revenuecatRefund: references.revenuecatRefund('tx1'),
      stripeInvoice: references.stripeInvoice('in_1'),
      stripePayment: references.stripePayment('pi_1'),
      stripeInstallment: references.stripeInstallment(7),
      topup: references.topup('tu_1'),
      stripeRefund: references.stripeRefund('ch_1'),
      stripePartialRefund: references.stripePartialRefund('ch_1', 200),
      studioDebit: references.studioDebit('sr_1'),
      studioRefund: references.studioRefund('sr_1'),
      appleTransaction: references.appleTransaction('2000000123'),
      appleRefund: references.appleRefund('2000000123', 1700000000000),
      appleRefundReversed: references.appleRefundReversed('2000000123', 1700000000000),
    };
    expect(built).toEqual({
      revenuecatEvent: 'revenuecat:event:ev1',
      revenuecatRefund: 'revenuecat:refund:tx1',
      stripeInvoice: 'stripe:invoice:in_1',
      stripePayment: 'stripe:payment:pi_1',
      stripeInstallment: 'stripe:installment:7',
      topup: 'topup:tu_1',
      stripeRefund: 'stripe:refund:ch_1',
      stripePartialRefund: 'stripe:refund:ch_1:200',
      studioDebit: 'studio:sr_1:debit',
      studioRefund: 'studio:sr_1:refund',
      appleTransaction: 'apple:transaction:2000000123',
      appleRefund: 'apple:refund:2000000123:1700000000000',
      appleRefundReversed: 'apple:refund:2000000123:1700000000000:reversed',
    });
    const prefixOf: Record<keyof typeof built, string> = {
      revenuecatEvent: referencePrefixes.revenuecatEvent,
      revenuecatRefund: referencePrefixes.revenuecatRefund,
      stripeInvoice: referencePrefixes.stripeInvoice,
      stripePayment: referencePrefixes.stripePayment,
      stripeInstallment: referencePrefixes.stripeInstallment,
      topup: referencePrefixes.topup,
      stripeRefund: referencePrefixes.stripeRefund,
      stripePartialRefund: referencePrefixes.stripeRefund,
      studioDebit: referencePrefixes.studio,
      studioRefund: referencePrefixes.studio,
      appleTransaction: referencePrefixes.appleTransaction,
      appleRefund: referencePrefixes.appleRefund,
      appleRefundReversed: referencePrefixes.appleRefund,
    };
    for (const [name, reference] of Object.entries(built)) {
      expect(reference.startsWith(prefixOf[name as keyof typeof built])).toBe(true);
    }
    for (const prefix of Object.values(referencePrefixes).filter((p) => p.startsWith('stripe'))) {
      expect(prefix.startsWith(referencePrefixes.stripe)).toBe(true);
    }
  });
});
