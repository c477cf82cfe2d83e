import { exampleCatalogPath, loadCatalog } from '../catalog/catalog';
import type { AppleSubscriptionStatus } from '../ports/app-store-api';
import { desiredAppleSubscription } from './desired-apple-subscription';

const catalog = loadCatalog(exampleCatalogPath);
const now = new Date('2030-01-01T00:00:00Z');
const hour = 3600_000;

const status = (
  value: number,
  expiresDate: number,
  extra: Partial<AppleSubscriptionStatus['transaction']> = {},
  renewal: AppleSubscriptionStatus['renewalInfo'] = { autoRenewStatus: 1 },
): AppleSubscriptionStatus => ({
  status: value,
  transaction: {
    transactionId: `t${expiresDate}`,
    originalTransactionId: 'o1',
    productId: 'com.tally.premium.monthly',
    expiresDate,
    ...extra,
  },
  renewalInfo: renewal,
});

describe('the subscription an App Store read asks for', () => {
  it('is the active plan running latest, with its auto-renew', () => {
    expect(
      desiredAppleSubscription(
        [status(1, now.getTime() + hour, {}, { autoRenewStatus: 0 }), status(1, now.getTime() + 2 * hour)],
        { catalog, now },
      ),
    ).toEqual({
      status: 'active',
      planId: 'premium',
      productId: 'com.tally.premium.monthly',
      expiresAt: new Date(now.getTime() + 2 * hour),
      store: 'app_store',
      autoRenew: true,
      billingIssueDetectedAt: null,
    });
  });

  it('keeps access through the billing grace period, as a billing issue', () => {
    const grace = now.getTime() + 5 * hour;
    expect(
      desiredAppleSubscription(
        [status(4, now.getTime() - hour, {}, { autoRenewStatus: 1, gracePeriodExpiresDate: grace })],
        {
          catalog,
          now,
        },
      ),
    ).toMatchObject({ status: 'active', expiresAt: new Date(grace), billingIssueDetectedAt: now });
  });

  it('is inactive when expired, in billing retry, revoked, past its date or not a plan', () => {
    const later = now.getTime() + hour;
    for (const entry of [
      status(2, now.getTime() - hour),
      status(3, later),
      status(5, later, { revocationDate: now.getTime() }),
      status(1, later, { revocationDate: now.getTime() }),
      status(1, now.getTime() - 1),
      status(1, later, { productId: 'com.tally.tokens.100' }),
    ]) {
      expect(desiredAppleSubscription([entry], { catalog, now })).toEqual({ status: 'inactive' });
    }
  });
});
