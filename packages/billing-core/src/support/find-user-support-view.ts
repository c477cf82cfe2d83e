import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { findSupportSubject } from './find-support-subject';
import { readDisputesSection } from './read-disputes-section';
import { readEventsSection } from './read-events-section';
import { readHoldsSection } from './read-holds-section';
import { readInstallmentsSection } from './read-installments-section';
import { readLedgerSection } from './read-ledger-section';
import { readLinkedIdsSection } from './read-linked-ids-section';
import { readPaymentsSection } from './read-payments-section';
import { readRefundsSection } from './read-refunds-section';
import { readStudioSection } from './read-studio-section';
import { readSubscriptionSection } from './read-subscription-section';
import { readTopupsSection } from './read-topups-section';
import { readWalletSection } from './read-wallet-section';
import type { SupportViewLimits, UserSupportView } from './user-support-view';

export const defaultSupportViewLimits: SupportViewLimits = {
  events: 100,
  ledgerEntries: 100,
  studioRequests: 50,
  subscriptionHistory: 50,
  holds: 50,
};

/**
 * "Where is my purchase?" in one call: everything Tally knows about one user, read in one
 * repeatable-read, read-only transaction so every section describes the same moment. The id may
 * be an alias: the view is the canonical user's (`findSupportSubject`), and sections holding the
 * user's own rows also read rows filed under any id linked to it. A user Tally has never seen gets
 * an empty view, not an error. Each section has its own reader (`read-*-section.ts`) and its own
 * type (`user-support-view.ts`).
 */
export async function findUserSupportView(
  db: Kysely<DB>,
  userId: string,
  options: { limits?: Partial<SupportViewLimits> } = {},
): Promise<UserSupportView> {
  const limits = { ...defaultSupportViewLimits, ...options.limits };
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const subject = await findSupportSubject(trx, userId);
      const wallet = await readWalletSection(trx, subject);
      return {
        userId,
        canonicalUserId: subject.userId,
        wallet,
        holds: await readHoldsSection(trx, subject, limits.holds),
        events: await readEventsSection(trx, subject, limits.events),
        ledger: await readLedgerSection(trx, subject, {
          limit: limits.ledgerEntries,
          beforeId: limits.ledgerBeforeId,
          walletBalance: wallet.balance,
        }),
        subscription: await readSubscriptionSection(trx, subject, limits.subscriptionHistory),
        payments: await readPaymentsSection(trx, subject),
        refunds: await readRefundsSection(trx, subject),
        disputes: await readDisputesSection(trx, subject),
        topups: await readTopupsSection(trx, subject),
        installments: await readInstallmentsSection(trx, subject),
        studioRequests: await readStudioSection(trx, subject, limits.studioRequests),
        linkedIds: await readLinkedIdsSection(trx, subject),
      };
    });
}
