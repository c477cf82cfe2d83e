import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { readWalletFunds } from '../ledger/held-tokens';
import { listLots } from '../ledger/read-wallet';
import type { SupportSubject, SupportWallet } from './user-support-view';

/** The canonical user's wallet, with held and available; balance 0 and no creation date when it has none. */
export async function readWalletSection(trx: Transaction<DB>, { userId }: SupportSubject): Promise<SupportWallet> {
  const wallet = await trx
    .selectFrom('wallets')
    .select(['balance', 'created_at'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const funds = await readWalletFunds(trx, userId, { lock: false });
  return {
    balance: wallet?.balance ?? 0,
    held: funds.held,
    // guard: support-view-available
    available: (wallet?.balance ?? 0) - funds.held,
    createdAt: wallet?.created_at ?? null,
    lots: await listLots(trx, userId),
  };
}
