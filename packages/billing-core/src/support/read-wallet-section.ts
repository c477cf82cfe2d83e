import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { readWalletFunds } from '../ledger/held-tokens';
import { listLots } from '../ledger/read-wallet';
import type { SupportSubject, SupportWallet } from './user-support-view';

/** The canonical user's wallet, with held and available; balance 0 and no creation date when it has none. */
export async function readWalletSection(trx: Transaction<DB>, { userId }: SupportSubject): Promise<SupportWallet> {
  const wallet = await trx
    .selectFrom('wallets')
    .select(['balance', 'debt', 'created_at'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const funds = await readWalletFunds(trx, userId, { lock: false });
  const debts = await trx
    .selectFrom('take_back_shortfalls')
    .select([
      'id',
      'source',
      'source_id',
      'take_back_reference',
      'shortfall',
      'recovered',
      'forgiven',
      'closed_at',
      'created_at',
    ])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  return {
    balance: wallet?.balance ?? 0,
    held: funds.held,
    // guard: support-view-available
    available: (wallet?.balance ?? 0) - funds.held,
    createdAt: wallet?.created_at ?? null,
    lots: await listLots(trx, userId),
    debt: Number(wallet?.debt ?? 0),
    debts: debts.map((row) => ({
      id: Number(row.id),
      source: row.source,
      sourceId: row.source_id,
      takeBackReference: row.take_back_reference,
      owed: Number(row.shortfall),
      settled: Number(row.recovered),
      forgiven: Number(row.forgiven),
      closedAt: row.closed_at,
      createdAt: row.created_at,
    })),
  };
}
