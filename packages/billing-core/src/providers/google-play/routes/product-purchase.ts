import type { Catalog } from '../../../catalog/catalog';
import type { PaymentEnvironment } from '../../../db/schema';
import { InvalidEventError, NotConfiguredError } from '../../../errors';
import { fileEventUnderUser } from '../../../inbox/file-event-under-user';
import { ignored, postThen, processed, retryLater } from '../../../inbox/inbox-handler';
import { ensureWallet } from '../../../ledger/ensure-wallet';
import type { GooglePlayProductPurchase } from '../../../ports/google-play-api';
import type { ProviderPorts } from '../../../ports/provider-ports';
import type { EventPolicy } from '../../../provider-data/payment-environment';
import { references } from '../../../references';
import { findUserByGoogleAccountId } from '../../../stores/store-accounts';
import { defineRoute } from '../../shared/create-provider-handler';
import type { GooglePlayEvent } from '../google-play-notification';
import { claimGooglePlayPurchase, isGooglePlayOrderVoided, lockGooglePlayOrder } from '../google-play-orders';

type Read = { kind: 'not-a-pack' } | { kind: 'read'; purchase: GooglePlayProductPurchase };

/** A licence tester's purchase (purchaseType 0) is sandbox; every other one is production. */
export function environmentOfPurchase(purchase: Pick<GooglePlayProductPurchase, 'purchaseType'>): PaymentEnvironment {
  return purchase.purchaseType === 0 ? 'sandbox' : 'production';
}

/**
 * ONE_TIME_PRODUCT_PURCHASED of a catalog pack (`tokenPacks[].googlePlayProducts` has the sku):
 * the notification only says something changed, so prepare re-reads `purchases.products.get`
 * (outside any transaction) and apply credits only a purchase Google says is purchased
 * (purchaseState 0): pending (2) waits and is read again, canceled (1) is ignored. The user is
 * the purchase's `obfuscatedExternalAccountId` (store-accounts). Once per order: the order's row
 * in google_play_purchases is claimed with the credit (`google:order:{orderId}`, a purchased lot)
 * and is the durable row the consume loop consumes from after commit; an order seen voided is
 * never credited.
 */
export function createProductPurchaseRoute(deps: { catalog: Catalog; ports: ProviderPorts; policy: EventPolicy }) {
  const packOf = (event: GooglePlayEvent) =>
    deps.catalog.findTokenPackByStoreProduct('googlePlay', event.notification.oneTimeProductNotification?.sku ?? '');

  return defineRoute<GooglePlayEvent, Read>({
    // The notification names no environment: the read's purchaseType does (checked in apply).
    environmentCheck: 'api',
    async prepare(event) {
      const notification = event.notification.oneTimeProductNotification;
      if (!notification) throw new InvalidEventError('ONE_TIME_PRODUCT_PURCHASED without oneTimeProductNotification');
      if (!packOf(event)) return { kind: 'not-a-pack' };
      const api = deps.ports.googlePlay;
      if (!api) throw new NotConfiguredError('the Play Developer API (GOOGLE_SERVICE_ACCOUNT_KEY_PATH)');
      return { kind: 'read', purchase: await api.getProductPurchase(notification.sku, notification.purchaseToken) };
    },
    async apply(uow, event, read, row) {
      const notification = event.notification.oneTimeProductNotification;
      const pack = packOf(event);
      if (!notification || !pack || read.kind === 'not-a-pack') {
        return ignored('not_in_catalog', `product ${notification?.sku ?? '(none)'} is not a catalog token pack`);
      }
      const { purchase } = read;
      // guard: google-pending-waits
      if (purchase.purchaseState === 2) {
        // Read again with the engine's growing delay (INBOX_RETRY_LATER_*), bounded by its maximum wait.
        return retryLater('the purchase is pending (purchaseState 2): credited once Google says it is purchased');
      }
      // guard: google-credit-only-purchased
      if (purchase.purchaseState !== 0) {
        return ignored(
          'purchase_canceled',
          `Google says the purchase is not purchased (purchaseState ${purchase.purchaseState})`,
        );
      }
      const environment = environmentOfPurchase(purchase);
      if (!deps.policy.paymentEnvironments.has(environment)) {
        return ignored(
          'other_environment',
          `${environment} purchase (a licence tester's); this deployment accepts ${[...deps.policy.paymentEnvironments].join(', ')}`,
        );
      }
      const orderId = purchase.orderId;
      if (!orderId) throw new InvalidEventError('Google answered a purchased purchase without orderId');
      const { trx } = uow;
      const userId = await findUserByGoogleAccountId(trx, purchase.obfuscatedExternalAccountId);
      if (userId === null) {
        return ignored(
          'no_user',
          `order ${orderId} names no Google account id Tally gave (obfuscatedExternalAccountId)`,
        );
      }
      await fileEventUnderUser(trx, row.id, userId);
      await lockGooglePlayOrder(trx, orderId);
      // guard: google-voided-never-credited
      if (await isGooglePlayOrderVoided(trx, orderId)) {
        return ignored('purchase_voided', `order ${orderId} was voided before it was credited`);
      }
      const quantity = purchase.quantity !== undefined && purchase.quantity >= 1 ? purchase.quantity : 1;
      const tokens = pack.tokens * quantity;
      const reference = references.googleOrder(orderId);
      const holder = await claimGooglePlayPurchase(trx, {
        orderId,
        purchaseToken: notification.purchaseToken,
        productId: notification.sku,
        packId: pack.id,
        userId,
        quantity,
        tokens,
        ledgerReference: reference,
        environment,
        inboxEventId: row.id,
      });
      // guard: google-credit-once-per-order
      if (holder.inbox_event_id !== row.id) {
        return ignored(
          'transaction_already_credited',
          `order ${orderId} was credited by inbox event ${holder.inbox_event_id} (${holder.ledger_reference})`,
        );
      }
      // No call to Google in here: the consume loop consumes from the row claimed above, after commit.
      // guard: google-consume-not-in-credit
      await ensureWallet(uow, userId);
      return postThen(
        {
          userId,
          reference,
          amount: tokens,
          reason: 'token_pack_purchase',
          lots: { kind: 'credit', category: 'purchased', expiresAt: null },
          inboxEventId: row.id,
          settlesDebt: true,
        },
        (posted) =>
          posted.kind === 'posted'
            ? processed(
                'credited',
                `credited ${tokens} tokens (${pack.id}${quantity > 1 ? ` × ${quantity}` : ''}, order ${orderId})`,
              )
            : processed('already_credited', `already credited (${posted.entry.reference})`),
      );
    },
  });
}
