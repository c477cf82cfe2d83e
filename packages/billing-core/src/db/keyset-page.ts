import { type SelectQueryBuilder, sql } from 'kysely';

/** Where a newest-first listing starts: rows with an id below `beforeId` (none: the newest). */
export interface KeysetPageRequest {
  limit: number;
  beforeId?: number | undefined;
}

/**
 * One page of a newest-first keyset listing on the table's `id`: at most `limit` rows below
 * `beforeId`. One row more is read, only to say that another page follows; `next` is then the
 * last row shown, whose key the caller hands out as the next page's cursor.
 */
export async function readKeysetPage<DB, TB extends keyof DB, Row>(
  query: SelectQueryBuilder<DB, TB, Row>,
  { limit, beforeId }: KeysetPageRequest,
): Promise<{ page: Row[]; next: Row | null }> {
  const below = beforeId === undefined ? query : query.where(sql.ref('id'), '<', beforeId);
  const rows = await below
    .orderBy(sql.ref('id'), 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  return { page, next: rows.length > limit ? (page[page.length - 1] ?? null) : null };
}
