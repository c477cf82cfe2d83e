import type { Kysely } from 'kysely';
import type { DB, StudioRequestRow } from '../db/schema';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One request of a user by its public id; undefined when it does not exist or is someone else's. */
export async function findStudioRequest(
  db: Kysely<DB>,
  userId: string,
  publicId: string,
): Promise<StudioRequestRow | undefined> {
  if (!UUID.test(publicId)) return undefined;
  return db
    .selectFrom('studio_requests')
    .selectAll()
    .where('public_id', '=', publicId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export interface StudioRequestPage {
  requests: StudioRequestRow[];
  /** Pass back as `beforeId` for the next (older) page; null on the last page. */
  nextCursor: number | null;
}

/** A user's studio requests, newest first, in pages. */
export async function listStudioRequests(
  db: Kysely<DB>,
  userId: string,
  options: { limit: number; beforeId?: number | undefined },
): Promise<StudioRequestPage> {
  let query = db
    .selectFrom('studio_requests')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(options.limit + 1);
  if (options.beforeId !== undefined) query = query.where('id', '<', options.beforeId);
  const rows = await query.execute();
  const requests = rows.slice(0, options.limit);
  const last = requests[requests.length - 1];
  return { requests, nextCursor: rows.length > options.limit && last ? last.id : null };
}
