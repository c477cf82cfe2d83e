import { precompiledSql } from '@tally/platform/db';
import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema';
import { ensureWalletsCtes, markWalletEnsured } from '../../ledger/ensure-wallet';
import type { UnitOfWork } from '../../unit-of-work/unit-of-work';
import {
  type FoundId,
  findLinksQuery,
  type LinkValues,
  linkableIds,
  linkWriteCtes,
  planLinks,
} from '../../users/link-user-ids';

/** A token pack credit's claim on a store transaction, without the user it credits. */
export interface PackClaim {
  transactionId: string;
  productId: string;
  reference: string;
  inboxEventId: number;
  verified: boolean;
}

/** The row that holds a store transaction (revenuecat_pack_transactions), as a claimer reads it. */
export interface PackTransactionHolder {
  user_id: string;
  inbox_event_id: number;
  ledger_reference: string;
}

/**
 * Claims a store transaction for the token pack credit of one inbox event, inside the crediting
 * transaction (revenuecat_pack_transactions, primary key on the store transaction): the first
 * event to commit wins. Returns the row that holds the transaction: this event's, or the one that
 * credited it first (a concurrent claimer waits on the key until the first commits, then finds
 * its row). Idempotent for the same event: a replay finds its own row.
 */
export async function claimPackTransaction(
  trx: Transaction<DB>,
  claim: PackClaim & { userId: string },
): Promise<PackTransactionHolder> {
  return (await claimSql(trx, claim)).rows[0] ?? heldClaim(trx, claim);
}

/**
 * The row of a claim that conflicted, in a statement of its own: its snapshot sees the row of a
 * claimer that committed while the insert waited on the key.
 */
async function heldClaim(trx: Transaction<DB>, claim: PackClaim): Promise<PackTransactionHolder> {
  const holder = (await holderSql(trx, claim)).rows[0];
  if (!holder) throw new Error(`store transaction ${claim.transactionId} conflicted but its row cannot be read`);
  return holder;
}

/**
 * linkUserIds (withWallet) and then claimPackTransaction for the canonical user, in one statement
 * when the event names one id (linkOneIdAndClaimPack), else in two instead of three or four: the look-up of the ids' links with, when every id is
 * already linked to one user (linkUserIds then writes nothing and answers that user), the claim
 * for that user; otherwise linkUserIds' write (the user, its wallet, the links) with the claim
 * for the canonical user it picked. A claim that conflicted is read in a statement of its own
 * (claimPackTransaction). Answers the canonical user and the row that holds the store transaction.
 */
export async function linkUserIdsAndClaimPack(
  uow: UnitOfWork,
  ids: readonly string[],
  claim: PackClaim,
): Promise<{ userId: string; holder: PackTransactionHolder }> {
  const ordered = linkableIds(ids);
  if (ordered.length === 0) throw new RangeError('linkUserIds needs at least one id');
  if (ordered.length === 1) return linkOneIdAndClaimPack(uow, ordered[0] as string, claim);
  const values: FindAndClaimValues = { ...claim };
  for (let index = 0; index < ordered.length; index += 1) values[`id${index}`] = ordered[index] as string;
  const { rows } = await findLinksAndClaimSql(ordered.length)(uow.trx, values);
  const found: FoundId[] = [];
  let claimed: PackTransactionHolder | undefined;
  for (const row of rows) {
    if (row.kind === 'claimed') {
      claimed = { user_id: row.user_id, inbox_event_id: row.inbox_event_id, ledger_reference: row.ledger_reference };
    } else found.push(row);
  }
  const plan = planLinks(ordered, found);
  if (plan.kind === 'linked') {
    if (claimed === undefined)
      return { userId: plan.userId, holder: await claimPackTransaction(uow.trx, { ...claim, userId: plan.userId }) };
    // The statement claimed for the one user every id is linked to: the plan's user.
    if (claimed.user_id !== plan.userId) {
      throw new Error(
        `store transaction ${claim.transactionId} was claimed for ${claimed.user_id}, not ${plan.userId}`,
      );
    }
    return { userId: plan.userId, holder: claimed };
  }
  if (claimed !== undefined)
    throw new Error(`store transaction ${claim.transactionId} was claimed before its ids were linked`);
  const { canonical, unlinked } = plan;
  const linkAndClaim = unlinked.length === 0 ? linkAndClaimSql.walletOnly : linkAndClaimSql.walletAndLinks;
  const inserted = (await linkAndClaim(uow.trx, { ...claim, canonical, unlinked })).rows[0];
  markWalletEnsured(uow, canonical);
  return { userId: canonical, holder: inserted ?? (await heldClaim(uow.trx, claim)) };
}

/**
 * linkUserIdsAndClaimPack for an event that names one id, in ONE statement whether or not the id
 * was seen before. With one id linkUserIds has only two answers: the user the id is linked to
 * (nothing to write), or the id itself, created with its wallet if missing and linked to itself
 * (planLinks: the only id is the first, and no other id can be linked or a user). So the
 * statement decides in SQL what planLinks would and writes the user, wallet and link only when
 * the id has no link yet, then claims for the user it answers. A claim that conflicted is read in
 * a statement of its own, as above.
 */
async function linkOneIdAndClaimPack(
  uow: UnitOfWork,
  id: string,
  claim: PackClaim,
): Promise<{ userId: string; holder: PackTransactionHolder }> {
  const { rows } = await linkOneAndClaimSql(uow.trx, { ...claim, id });
  let userId: string | undefined;
  let claimed: PackTransactionHolder | undefined;
  for (const row of rows) {
    if (row.kind === 'claimed') {
      claimed = { user_id: row.user_id, inbox_event_id: row.inbox_event_id, ledger_reference: row.ledger_reference };
    } else if (row.kind === 'link') userId = row.user_id;
    else if (row.kind === 'created') {
      userId = id;
      markWalletEnsured(uow, id);
    }
  }
  if (userId === undefined) throw new Error(`id ${id} was neither linked nor written`);
  if (claimed !== undefined && claimed.user_id !== userId) {
    throw new Error(`store transaction ${claim.transactionId} was claimed for ${claimed.user_id}, not ${userId}`);
  }
  return { userId, holder: claimed ?? (await heldClaim(uow.trx, claim)) };
}

type LinkOneRow =
  | { kind: 'link'; user_id: string; inbox_event_id: null; ledger_reference: null }
  | { kind: 'created'; user_id: string; inbox_event_id: null; ledger_reference: null }
  | { kind: 'claimed'; user_id: string; inbox_event_id: number; ledger_reference: string };

/**
 * linkOneIdAndClaimPack's statement: the id's link (`link`, its user); without one (`fresh`), the
 * user and its empty wallet if missing and the id linked to itself (`created`: the caller marks the
 * wallet ensured); then the claim for the user so found (`claimed` when it inserted). The foreign
 * keys of the wallet, the link and the claim are checked at the end of the statement, when the
 * user row exists. A concurrent linker of the id wins the link (DO NOTHING), as with linkUserIds.
 */
const linkOneAndClaimSql = precompiledSql<PackClaim & { id: string }, LinkOneRow>(
  // guard: revenuecat-pack-linked-id
  (s) => sql`
    WITH found AS MATERIALIZED (SELECT user_id FROM user_aliases WHERE alias = ${s.id}),
    fresh AS MATERIALIZED (SELECT ${s.id}::text AS id WHERE NOT EXISTS (SELECT 1 FROM found)),
    ${ensureWalletsCtes(sql`SELECT id FROM fresh`)},
    new_link AS (
      INSERT INTO user_aliases (alias, user_id, inbox_event_id)
      SELECT id, id, ${s.inboxEventId}::bigint FROM fresh
      ON CONFLICT (alias) DO NOTHING),
    claim AS (${claimFromSql(s, sql`(SELECT user_id FROM found UNION ALL SELECT id FROM fresh) AS claimer`)})
    SELECT 'link' AS kind, user_id, NULL::bigint AS inbox_event_id, NULL::text AS ledger_reference FROM found
    UNION ALL
    SELECT 'created', id, NULL::bigint, NULL::text FROM fresh
    UNION ALL
    SELECT 'claimed', user_id, inbox_event_id, ledger_reference FROM claim`,
);

/** A store transaction as RevenueCat bodies carry it (a string, or digits sent as a number); null otherwise. */
export function toStoreTransactionId(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0 && value.length <= 255) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}

/**
 * The claim's insert for the user a statement found (`users`: a row source whose column is
 * `user_id`, one row or none), as the body of a `claim` CTE.
 */
function claimFromSql(s: { readonly [K in keyof PackClaim]: PackClaim[K] }, users: RawBuilder<unknown>) {
  return sql`
      INSERT INTO revenuecat_pack_transactions
        (store_transaction_id, user_id, product_id, ledger_reference, inbox_event_id, verified)
      SELECT ${s.transactionId}::text, user_id, ${s.productId}::text, ${s.reference}::text,
             ${s.inboxEventId}::bigint, ${s.verified}::boolean
        FROM ${users}
      ON CONFLICT (store_transaction_id) DO NOTHING
      RETURNING user_id, inbox_event_id, ledger_reference`;
}

/** claimPackTransaction's insert, compiled once (platform's precompiled-sql.ts). */
const claimSql = precompiledSql<PackClaim & { userId: string }, PackTransactionHolder>(
  (s) => sql`
    INSERT INTO revenuecat_pack_transactions
      (store_transaction_id, user_id, product_id, ledger_reference, inbox_event_id, verified)
    VALUES (${s.transactionId}, ${s.userId}, ${s.productId}, ${s.reference}, ${s.inboxEventId}, ${s.verified})
    ON CONFLICT (store_transaction_id) DO NOTHING
    RETURNING user_id, inbox_event_id, ledger_reference`,
);

/** linkUserIds' write (withWallet: the user and its wallet, and the links) and then the claim for the canonical user. */
function linkAndClaimStatement(withLinks: boolean) {
  return precompiledSql<PackClaim & LinkValues, PackTransactionHolder>(
    (s) => sql`
      WITH ${linkWriteCtes(s, true, withLinks)},
      claim AS (
        INSERT INTO revenuecat_pack_transactions
          (store_transaction_id, user_id, product_id, ledger_reference, inbox_event_id, verified)
        VALUES (${s.transactionId}, ${s.canonical}, ${s.productId}, ${s.reference}, ${s.inboxEventId}, ${s.verified})
        ON CONFLICT (store_transaction_id) DO NOTHING
        RETURNING user_id, inbox_event_id, ledger_reference)
      SELECT user_id, inbox_event_id, ledger_reference FROM claim`,
  );
}
const linkAndClaimSql = { walletOnly: linkAndClaimStatement(false), walletAndLinks: linkAndClaimStatement(true) };

const holderSql = precompiledSql<{ transactionId: string }, PackTransactionHolder>(
  (s) => sql`
    SELECT user_id, inbox_event_id, ledger_reference FROM revenuecat_pack_transactions
     WHERE store_transaction_id = ${s.transactionId}`,
);

type FindAndClaimValues = PackClaim & Record<`id${number}`, string>;
type FindAndClaimRow =
  | (FoundId & { inbox_event_id: null; ledger_reference: null })
  | { kind: 'claimed'; id: string; user_id: string; inbox_event_id: number; ledger_reference: string };

/**
 * linkUserIdsAndClaimPack's statement, one per number of ids: linkUserIds' look-up (its rows,
 * as findLinksQuery answers them) and, only when it finds every id linked and all to one user
 * (`settled`: the common case in which linkUserIds answers that user and writes nothing), the
 * claim for that user (a `claimed` row when it inserted).
 */
const findLinksAndClaimByCount: ((
  trx: Transaction<DB>,
  values: FindAndClaimValues,
) => Promise<{ rows: FindAndClaimRow[] }>)[] = [];
function findLinksAndClaimSql(count: number) {
  let statement = findLinksAndClaimByCount[count];
  if (statement === undefined) {
    statement = precompiledSql<FindAndClaimValues, FindAndClaimRow>(
      (s) => sql`
        WITH found AS MATERIALIZED (${findLinksQuery(Array.from({ length: count }, (_, index) => s[`id${index}`]))}),
        settled AS (
          SELECT min(user_id) AS user_id FROM found WHERE kind = 'link'
          HAVING count(*) = ${sql.lit(count)} AND count(DISTINCT user_id) = 1),
        claim AS (${claimFromSql(s, sql`settled`)})
        SELECT kind, id, user_id, NULL::bigint AS inbox_event_id, NULL::text AS ledger_reference FROM found
        UNION ALL
        SELECT 'claimed', user_id, user_id, inbox_event_id, ledger_reference FROM claim`,
    );
    // Beyond a few ids (never seen from RevenueCat) the statement is compiled per call.
    if (count <= 16) findLinksAndClaimByCount[count] = statement;
  }
  return statement;
}
