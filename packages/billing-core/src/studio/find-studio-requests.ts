import type { Kysely } from 'kysely';
import { readKeysetPage } from '../db/keyset-page';
import type { DB, StudioRequestRow } from '../db/schema';
import { belongsToUser, userIdsOf } from '../users/link-user-ids';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One request of a user by its public id; undefined when it does not exist or is someone else's.
 * `userId` is a canonical user (resolveUserId): a request filed under an id linked to it (made
 * before the link existed) is the user's too.
 */
export async function findStudioRequest(
  db: Kysely<DB>,
  userId: string,
  publicId: string,
): Promise<StudioRequestRow | undefined> {
  if (!UUID.test(publicId)) return undefined;
  const row = await db.selectFrom('studio_requests').selectAll().where('public_id', '=', publicId).executeTakeFirst();
  return row && (await belongsToUser(db, row.user_id, userId)) ? row : undefined;
}

export interface StudioRequestPage {
  requests: StudioRequestRow[];
  /**
   * The public id of the page's last (oldest) request, to pass back as `after` for the next
   * page; null on the last page. Never the internal id, which would show how many requests
   * all users made.
   */
  nextCursor: string | null;
}

/**
 * A user's studio requests, newest first, in pages. `userId` is a canonical user (resolveUserId);
 * requests filed under ids linked to it are listed too (userIdsOf). `after` is a cursor from an
 * earlier page: the public id of one of this user's requests. Returns undefined when it is not
 * (unknown, malformed, or another user's), so a bad cursor is an error rather than an empty page.
 */
export async function listStudioRequests(
  db: Kysely<DB>,
  userId: string,
  options: { limit: number; after?: string | undefined },
): Promise<StudioRequestPage | undefined> {
  let beforeId: number | undefined;
  if (options.after !== undefined) {
    const cursor = await findStudioRequest(db, userId, options.after);
    if (!cursor) return undefined;
    beforeId = cursor.id;
  }
  const { page, next } = await readKeysetPage(
    db
      .selectFrom('studio_requests')
      .selectAll()
      .where('user_id', 'in', await userIdsOf(db, userId)),
    { limit: options.limit, beforeId },
  );
  return { requests: page, nextCursor: next?.public_id ?? null };
}
