import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { createWalletIfMissing } from '../ledger/ensure-wallet';

/**
 * The ids a user's store purchases carry (docs/stores.md "Who bought it"): the app passes
 * `appleAppAccountToken` to StoreKit (`appAccountToken`) and `googleObfuscatedAccountId` to Play
 * Billing (`setObfuscatedAccountId`); Apple's and Google's notifications name the user by them.
 * Random, unique, never the user id (the stores must not learn it), never changed once made.
 */
export interface StoreAccounts {
  userId: string;
  appleAppAccountToken: string;
  googleObfuscatedAccountId: string;
}

/** The user's store ids, made on the first read (concurrent first reads agree: one row wins). */
export async function readStoreAccounts(db: Kysely<DB>, userId: string): Promise<StoreAccounts> {
  const existing = await selectAccounts(db, userId);
  if (existing) return existing;
  return db.transaction().execute(async (trx) => {
    await createWalletIfMissing(trx, userId);
    await sql`INSERT INTO store_accounts (user_id) VALUES (${userId}) ON CONFLICT (user_id) DO NOTHING`.execute(trx);
    const made = await selectAccounts(trx, userId);
    if (!made) throw new Error(`the store accounts of ${userId} were not made`);
    return made;
  });
}

async function selectAccounts(db: Kysely<DB> | Transaction<DB>, userId: string): Promise<StoreAccounts | undefined> {
  const row = await db
    .selectFrom('store_accounts')
    .select(['apple_app_account_token', 'google_obfuscated_account_id'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row
    ? {
        userId,
        appleAppAccountToken: row.apple_app_account_token,
        googleObfuscatedAccountId: row.google_obfuscated_account_id,
      }
    : undefined;
}

/** The user an Apple `appAccountToken` names, or null (a token Tally never gave, or none: case-insensitive UUID). */
export async function findUserByAppleAccountToken(
  db: Kysely<DB> | Transaction<DB>,
  token: string | null | undefined,
): Promise<string | null> {
  if (!token || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(token)) return null;
  const row = await db
    .selectFrom('store_accounts')
    .select('user_id')
    .where('apple_app_account_token', '=', token.toLowerCase())
    .executeTakeFirst();
  return row?.user_id ?? null;
}

/** The user a Google Play `obfuscatedExternalAccountId` names, or null. */
export async function findUserByGoogleAccountId(
  db: Kysely<DB> | Transaction<DB>,
  accountId: string | null | undefined,
): Promise<string | null> {
  if (!accountId) return null;
  const row = await db
    .selectFrom('store_accounts')
    .select('user_id')
    .where('google_obfuscated_account_id', '=', accountId)
    .executeTakeFirst();
  return row?.user_id ?? null;
}

export interface StoreConsent {
  userId: string;
  /** Whether the user agreed that Tally sends Apple consumption data (false when never asked). */
  consented: boolean;
  updatedAt: string | null;
}

/** `POST …/store-consent {consented}`: the user's answer in the app; the latest stands. Idempotent. */
export async function recordStoreConsent(db: Kysely<DB>, userId: string, consented: boolean): Promise<StoreConsent> {
  return db.transaction().execute(async (trx) => {
    await createWalletIfMissing(trx, userId);
    const row = await trx
      .insertInto('store_consents')
      .values({ user_id: userId, consented })
      .onConflict((conflict) => conflict.column('user_id').doUpdateSet({ consented, updated_at: sql`now()` }))
      .returning(['consented', 'updated_at'])
      .executeTakeFirstOrThrow();
    return { userId, consented: row.consented, updatedAt: new Date(row.updated_at).toISOString() };
  });
}

/** Whether Tally may send Apple consumption data for the user: only with a recorded consent. */
export async function hasStoreConsent(db: Kysely<DB> | Transaction<DB>, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('store_consents')
    .select('consented')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.consented === true;
}
