import { type Kysely, sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { AutoTopupAttemptRow, DB, TopupRow } from '../db/schema';
import { activeHold } from '../ledger/held-tokens';
import { autoTopupReference } from '../topups/auto-topup-top-ups';

export type PreparedAutoTopupCharge = { kind: 'ready'; topup: TopupRow } | { kind: 'canceled'; code: string };

/**
 * Before the charge, in one short transaction that commits before Stripe is called: the
 * attempt's top-up row (`autotopup:{id}`, pending, the pack's tokens and price from the catalog),
 * the row the credit settles. Its existence says Stripe may have been asked: from then on the
 * attempt is only ever resolved with its key. Before that, an attempt whose user turned auto
 * top-up off (`auto_topup_off`), whose available is back at or above the threshold (`not_needed`:
 * a purchase or a released hold came first) or whose pack left the catalog (`unknown_pack`) is
 * canceled: nothing was charged.
 */
export async function prepareAutoTopupCharge(
  deps: { db: Kysely<DB>; catalog: Catalog },
  attempt: AutoTopupAttemptRow,
): Promise<PreparedAutoTopupCharge> {
  const reference = autoTopupReference(attempt.id);
  return deps.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('topups').selectAll().where('reference', '=', reference).executeTakeFirst();
    if (existing) return { kind: 'ready', topup: existing };
    const state = await sql<{ enabled: boolean | null; threshold: number | null; available: number }>`
      SELECT s.enabled, s.threshold,
             (coalesce((SELECT balance FROM wallets WHERE user_id = ${attempt.user_id}), 0)
              - (SELECT coalesce(sum(a.amount), 0) FROM holds a WHERE a.user_id = ${attempt.user_id} AND ${activeHold('a')}))::bigint AS available
        FROM (SELECT 1) one
        LEFT JOIN auto_topup_settings s ON s.user_id = ${attempt.user_id}`.execute(trx);
    const row = state.rows[0];
    const pack = deps.catalog.findTokenPackById(attempt.pack_id);
    const cancel =
      row?.enabled !== true
        ? 'auto_topup_off'
        : Number(row.available) >= Number(row.threshold)
          ? 'not_needed'
          : !pack || pack.amountMinor === undefined || pack.currency === undefined
            ? 'unknown_pack'
            : null;
    if (cancel !== null || !pack || pack.amountMinor === undefined || pack.currency === undefined) {
      const code = cancel ?? 'unknown_pack';
      await trx
        .updateTable('auto_topup_attempts')
        .set({
          status: 'canceled',
          failure_code: code,
          locked_until: null,
          finished_at: sql`now()`,
          updated_at: sql`now()`,
        })
        .where('id', '=', attempt.id)
        .where('status', '=', 'pending')
        .execute();
      return { kind: 'canceled', code };
    }
    const topup = await trx
      .insertInto('topups')
      .values({
        reference,
        user_id: attempt.user_id,
        pack_id: pack.id,
        tokens: pack.tokens,
        amount_minor: pack.amountMinor,
        currency: pack.currency,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { kind: 'ready', topup };
  });
}
