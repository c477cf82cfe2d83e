import { precompiledSql, sqlAnyOf } from '@tally/platform/db';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { ensureWalletCtes, markWalletEnsured } from '../ledger/ensure-wallet';
import type { UnitOfWork } from '../unit-of-work/unit-of-work';

/** RevenueCat's SDK names a customer that has not logged in `$RCAnonymousID:<hex>`. */
export function isAnonymousRevenueCatId(id: string): boolean {
  return id.startsWith('$RCAnonymousID:');
}

/** Ids worth linking: strings of 1..255 characters, first occurrence kept, order preserved. */
export function linkableIds(ids: readonly unknown[]): string[] {
  const seen = new Set<string>();
  for (const id of ids) {
    if (typeof id === 'string' && id.length >= 1 && id.length <= 255) seen.add(id);
  }
  return [...seen];
}

/**
 * The ids one RevenueCat customer is known to go by, as RevenueCat's REST read confirms them:
 * the id read (RevenueCat answered for it) and the read's `subscriber.original_app_user_id`
 * (REST v1 lists no other ids). Ids are linked only from this, never from a webhook body's
 * `original_app_user_id` or `aliases`: a body forged with a leaked Authorization value could
 * otherwise link a victim's id to an attacker's user and move the victim's credits there.
 */
export function revenueCatConfirmedIds(readId: string, subscriber: { original_app_user_id: string }): string[] {
  return linkableIds([readId, subscriber.original_app_user_id]);
}

/**
 * The canonical user of an id: the user it is linked to, else the id itself. Every product API
 * route by a user id (wallet, ledger, subscription, AI Studio, top-ups) resolves the path's id
 * through this once (apps/api `createUserRoutes`) and reads, writes and locks only the answer, so
 * any linked id answers and spends for the same user.
 */
export async function resolveUserId(db: Kysely<DB> | Transaction<DB>, id: string): Promise<string> {
  const link = await db.selectFrom('user_aliases').select('user_id').where('alias', '=', id).executeTakeFirst();
  return link?.user_id ?? id;
}

/**
 * `resolveUserId` of several ids in one statement, answered by position (a repeated id answered
 * each time). The product API resolves the ids of requests arriving together this way
 * (apps/api `createUserRoutes`), one round trip for the lot.
 */
export async function resolveUserIds(db: Kysely<DB> | Transaction<DB>, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const links = await db
    .selectFrom('user_aliases')
    .select(['alias', 'user_id'])
    // One plan per connection, not one per call (sqlAnyOf): every api request resolves its id here.
    .where('alias', '=', sql<string>`${sqlAnyOf([...new Set(ids)], 'text')}`)
    .execute();
  const canonical = new Map(links.map((link) => [link.alias, link.user_id]));
  // guard: user-ids-resolved-together
  return ids.map((id) => canonical.get(id) ?? id);
}

/**
 * The ids a canonical user's rows can be filed under: the user itself, then every id linked to it
 * (sorted). Rows written under an id before RevenueCat linked it to the user (a studio request or
 * a top-up made under an anonymous id the app had not logged in yet) stay the user's.
 */
export async function userIdsOf(db: Kysely<DB> | Transaction<DB>, userId: string): Promise<string[]> {
  const aliases = await db
    .selectFrom('user_aliases')
    .select('alias')
    .where('user_id', '=', userId)
    .where('alias', '<>', userId)
    .orderBy('alias')
    .execute();
  return [userId, ...aliases.map((row) => row.alias)];
}

/** Whether a row filed under `ownerId` is the canonical user `userId`'s: the same id or one linked to it. */
export async function belongsToUser(
  db: Kysely<DB> | Transaction<DB>,
  ownerId: string,
  userId: string,
): Promise<boolean> {
  return ownerId === userId || (await resolveUserId(db, ownerId)) === userId;
}

/**
 * Links the ids one RevenueCat customer goes by (an event's `app_user_id`, then
 * `original_app_user_id`, then `aliases`, in that order) to one canonical Tally user, and returns
 * it. The canonical user is, in order of preference:
 *
 * 1. the user the first already-linked id points at (links are never re-pointed, so state that
 *    landed on a user stays reachable by every id that ever reached it);
 * 2. the first id that is already a Tally user (credited before it was linked);
 * 3. the first id that is not anonymous (`$RCAnonymousID:…`): the id the product knows;
 * 4. the first id.
 *
 * Every id not yet linked is then linked to it (ON CONFLICT DO NOTHING: a concurrent linker of
 * the same id wins, and this call's answer still names a user the id group reaches). Joins the
 * caller's transaction; creates the canonical user row.
 */
export async function linkUserIds(uow: UnitOfWork, ids: readonly string[], options: LinkOptions = {}): Promise<string> {
  const ordered = linkableIds(ids);
  if (ordered.length === 0) throw new RangeError('linkUserIds needs at least one id');
  // One round trip: each id's link, and whether it is a Tally user already.
  const found = await findLinksSql(ordered.length)(uow.trx, ordered);
  return linkFoundUserIds(uow, ordered, found.rows, options);
}

/** What findLinks reads of one id: its link (`link`, to `user_id`) or its user row (`user`). */
export type FoundId = { kind: 'link' | 'user'; id: string; user_id: string };

export interface LinkOptions {
  inboxEventId?: number | null;
  /**
   * The caller is about to move the user's money: create the canonical user's empty wallet in
   * the same statement as the user and the links (ensureWalletCtes), so the posting that
   * follows finds it at once.
   */
  withWallet?: boolean;
}

/**
 * linkUserIds after its look-up, for a caller that ran findLinksQuery for the ids `ordered`
 * (linkableIds' answer, never empty) in the same transaction, within a statement of its own:
 * picks the canonical user, then creates and links what is missing.
 */
async function linkFoundUserIds(
  uow: UnitOfWork,
  ordered: readonly string[],
  found: readonly FoundId[],
  options: LinkOptions = {},
): Promise<string> {
  const plan = planLinks(ordered, found);
  if (plan.kind === 'linked') return plan.userId;
  const { canonical, unlinked } = plan;
  // One statement: the canonical user (and, withWallet, its wallet) if missing, then every id not
  // linked yet linked to it (the foreign keys are checked at the end of the statement, when the
  // user row exists).
  const withWallet = options.withWallet === true;
  const link = withWallet
    ? unlinked.length === 0
      ? linkSql.walletOnly
      : linkSql.walletAndLinks
    : unlinked.length === 0
      ? linkSql.userOnly
      : linkSql.userAndLinks;
  await link(uow.trx, {
    canonical,
    inboxEventId: options.inboxEventId ?? null,
    unlinked,
  });
  if (options.withWallet) markWalletEnsured(uow, canonical);
  return canonical;
}

/**
 * What linkUserIds does after its look-up: `linked`, every id already linked to one user (that
 * user exists: links are only ever made together with the user row), nothing to write; or
 * `write`, the canonical user to create if missing and the ids to link to it (linkWriteCtes).
 */
export type LinkPlan =
  | { kind: 'linked'; userId: string }
  | { kind: 'write'; canonical: string; unlinked: readonly string[] };

/** linkUserIds' choice of the canonical user (the rule order above) from its look-up's rows. */
export function planLinks(ordered: readonly string[], found: readonly FoundId[]): LinkPlan {
  const first = ordered[0];
  if (first === undefined) throw new RangeError('linkUserIds needs at least one id');
  const linkOf = new Map<string, string>();
  const users = new Set<string>();
  for (const row of found) {
    if (row.kind === 'link') linkOf.set(row.id, row.user_id);
    else users.add(row.id);
  }
  // The common case: every id is already linked, all to one user.
  const firstLink = linkOf.get(first);
  if (firstLink !== undefined && ordered.every((id) => linkOf.get(id) === firstLink)) {
    return { kind: 'linked', userId: firstLink };
  }
  const canonical =
    ordered.map((id) => linkOf.get(id)).find((user) => user !== undefined) ??
    ordered.find((id) => users.has(id)) ??
    ordered.find((id) => !isAnonymousRevenueCatId(id)) ??
    first;
  const unlinked = [canonical, ...ordered].filter((id, index, all) => !linkOf.has(id) && all.indexOf(id) === index);
  return { kind: 'write', canonical, unlinked };
}

/**
 * The look-up of linkUserIds, one precompiled statement per number of ids (db/precompiled-sql.ts).
 * (`IN` a list of parameters rather than `= ANY` an array: with an array Postgres expects ten
 * elements in a generic plan and so plans every execution anew.) An event names a handful of ids.
 */
const findLinksByCount: ((trx: Transaction<DB>, ids: readonly string[]) => Promise<{ rows: FoundId[] }>)[] = [];
function findLinksSql(count: number) {
  let statement = findLinksByCount[count];
  if (statement === undefined) {
    statement = precompiledSql<readonly string[], FoundId>((s) =>
      findLinksQuery(Array.from({ length: count }, (_, index) => s[index])),
    );
    // Beyond a few ids (never seen from RevenueCat) the statement is compiled per call, as before.
    if (count <= 16) findLinksByCount[count] = statement;
  }
  return statement;
}

/**
 * linkUserIds' look-up of `ids` (the rows of FoundId), also for a caller that runs it as a CTE
 * of a bigger statement and hands its rows to linkFoundUserIds.
 */
export function findLinksQuery(ids: readonly unknown[]) {
  const list = sql.join(ids);
  return sql`
        SELECT 'link' AS kind, alias AS id, user_id FROM user_aliases WHERE alias IN (${list})
        UNION ALL
        SELECT 'user', id, id FROM users WHERE id IN (${list})`;
}

export type LinkValues = { canonical: string; inboxEventId: number | null; unlinked: readonly string[] };

/**
 * linkUserIds' write as CTEs (`new_user`, with the wallet `new_wallet`, with links `new_links`)
 * another statement can start with: the canonical user (and its wallet) if missing, then the
 * ids not linked yet linked to it. The caller calls markWalletEnsured after, withWallet.
 */
export function linkWriteCtes(
  s: { readonly [K in keyof LinkValues]: LinkValues[K] },
  withWallet: boolean,
  withLinks: boolean,
) {
  const userCtes = withWallet
    ? ensureWalletCtes(s.canonical)
    : sql`new_user AS (INSERT INTO users (id) VALUES (${s.canonical}) ON CONFLICT (id) DO NOTHING)`;
  const newLinks = withLinks
    ? sql`, new_links AS (
          INSERT INTO user_aliases (alias, user_id, inbox_event_id)
          SELECT alias, ${s.canonical}, ${s.inboxEventId}::bigint
            FROM unnest(${s.unlinked}::text[]) AS alias
          ON CONFLICT (alias) DO NOTHING)`
    : sql``;
  return sql`${userCtes}${newLinks}`;
}

/** linkUserIds' write, precompiled per shape: the user alone or with its wallet, links or none. */
function linkStatement(withWallet: boolean, withLinks: boolean) {
  return precompiledSql<LinkValues>((s) => sql`WITH ${linkWriteCtes(s, withWallet, withLinks)} SELECT 1`);
}
const linkSql = {
  userOnly: linkStatement(false, false),
  userAndLinks: linkStatement(false, true),
  walletOnly: linkStatement(true, false),
  walletAndLinks: linkStatement(true, true),
};

/**
 * Whether RevenueCat itself has sent this id: linked (links are made only from RevenueCat events'
 * ids) or named by a stored RevenueCat event (`app_user_id` or a TRANSFER's first
 * `transferred_to` in `user_id`, `original_app_user_id` in `provider_customer_id`). A user row
 * alone does not count: top-ups and AI Studio requests create one for any id an app sends, and
 * the on-demand sync must not read such an id from RevenueCat, whose read creates the customer.
 */
export async function isRevenueCatSentId(db: Kysely<DB>, id: string): Promise<boolean> {
  const alias = await db.selectFrom('user_aliases').select('alias').where('alias', '=', id).executeTakeFirst();
  if (alias) return true;
  const event = await db
    .selectFrom('inbox_events')
    .select('id')
    .where('provider', '=', 'revenuecat')
    .where((eb) => eb.or([eb('user_id', '=', id), eb('provider_customer_id', '=', id)]))
    .limit(1)
    .executeTakeFirst();
  return event !== undefined;
}
