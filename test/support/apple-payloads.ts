import { randomUUID } from 'node:crypto';
import type { ApplePki } from './apple-signing';

// What the App Store signs and posts, built from plain specs: no import but node's own, so the bench
// (bench/lib/test-support.mjs) signs its notifications with this same code.

/** The app the tests' notifications are for (APPLE_BUNDLE_ID, APPLE_APP_APPLE_ID). */
export const appleBundleId = 'com.tally.tests';
export const appleAppAppleId = 1_234_567_890;
/** The example catalog's App Store products. */
export const applePackProduct = 'com.tally.tokens.100';
export const applePlanProduct = 'com.tally.premium.monthly';

export type AppleEnvironmentName = 'Production' | 'Sandbox' | 'Xcode';

/** A transaction's fields (JWSTransactionDecodedPayload); unset ones get a consumable's defaults. */
export interface AppleTransactionSpec {
  transactionId: string;
  originalTransactionId?: string;
  productId?: string;
  appAccountToken?: string | null;
  type?: string;
  purchaseDate?: number;
  expiresDate?: number;
  revocationDate?: number;
  revocationReason?: number;
  quantity?: number;
  price?: number;
  currency?: string;
  bundleId?: string;
}

export interface AppleRenewalSpec {
  originalTransactionId?: string;
  productId?: string;
  autoRenewStatus?: 0 | 1;
  gracePeriodExpiresDate?: number;
  isInBillingRetryPeriod?: boolean;
}

export interface AppleNotificationSpec {
  type: string;
  subtype?: string;
  uuid?: string;
  environment?: AppleEnvironmentName;
  bundleId?: string;
  appAppleId?: number;
  signedDate?: number;
  transaction?: AppleTransactionSpec;
  renewalInfo?: AppleRenewalSpec;
  consumptionRequestReason?: string;
}

/** A signed transaction info's payload, as the App Store writes one. */
export function appleTransactionPayload(spec: AppleTransactionSpec, environment: AppleEnvironmentName = 'Production') {
  const now = Date.now();
  const { appAccountToken, ...rest } = spec;
  return {
    originalTransactionId: spec.transactionId,
    bundleId: appleBundleId,
    productId: applePackProduct,
    purchaseDate: now,
    originalPurchaseDate: now,
    quantity: 1,
    type: 'Consumable',
    inAppOwnershipType: 'PURCHASED',
    signedDate: now,
    environment,
    transactionReason: 'PURCHASE',
    storefront: 'USA',
    storefrontId: '143441',
    price: 990,
    currency: 'USD',
    ...(appAccountToken ? { appAccountToken } : {}),
    ...rest,
  };
}

/** A renewal info's payload. */
export function appleRenewalPayload(spec: AppleRenewalSpec, environment: AppleEnvironmentName = 'Production') {
  return {
    autoRenewProductId: spec.productId ?? applePlanProduct,
    autoRenewStatus: 1,
    signedDate: Date.now(),
    environment,
    productId: applePlanProduct,
    ...spec,
  };
}

/** A notification's decoded payload with its nested infos signed by `pki`. */
export function appleNotificationPayload(pki: ApplePki, spec: AppleNotificationSpec) {
  const environment = spec.environment ?? 'Production';
  return {
    notificationType: spec.type,
    ...(spec.subtype ? { subtype: spec.subtype } : {}),
    notificationUUID: spec.uuid ?? randomUUID(),
    version: '2.0',
    signedDate: spec.signedDate ?? Date.now(),
    data: {
      environment,
      bundleId: spec.bundleId ?? appleBundleId,
      appAppleId: spec.appAppleId ?? appleAppAppleId,
      bundleVersion: '1.0',
      ...(spec.transaction
        ? { signedTransactionInfo: pki.sign(appleTransactionPayload(spec.transaction, environment)) }
        : {}),
      ...(spec.renewalInfo ? { signedRenewalInfo: pki.sign(appleRenewalPayload(spec.renewalInfo, environment)) } : {}),
      ...(spec.consumptionRequestReason ? { consumptionRequestReason: spec.consumptionRequestReason } : {}),
      status: 1,
    },
  };
}

/** A notification's `signedPayload` (a JWS by `pki`'s leaf): what a delivery carries and the history lists. */
export function appleSignedPayload(pki: ApplePki, spec: AppleNotificationSpec): string {
  return pki.sign(appleNotificationPayload(pki, spec));
}

/** The body App Store Server Notifications V2 posts: `{"signedPayload": <JWS>}`. */
export function appleNotificationBody(pki: ApplePki, spec: AppleNotificationSpec): string {
  return JSON.stringify({ signedPayload: appleSignedPayload(pki, spec) });
}
