import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';

/** Creates the user and an empty wallet if they do not exist. Idempotent; joins the caller's transaction. */
export async function ensureWallet(trx: Transaction<DB>, userId: string): Promise<void> {
  await trx
    .insertInto('users')
    .values({ id: userId })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await trx
    .insertInto('wallets')
    .values({ user_id: userId })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
}
