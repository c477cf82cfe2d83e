import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';

/**
 * Creates the user and an empty wallet if they do not exist, in one statement (the foreign key
 * is checked at the end of the statement, when the user row exists). Idempotent; joins the
 * caller's transaction.
 */
export async function ensureWallet(trx: Transaction<DB>, userId: string): Promise<void> {
  await sql`
    WITH new_user AS (INSERT INTO users (id) VALUES (${userId}) ON CONFLICT (id) DO NOTHING)
    INSERT INTO wallets (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING`.execute(trx);
}
