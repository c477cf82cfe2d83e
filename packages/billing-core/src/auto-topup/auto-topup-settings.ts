import { type Kysely, sql, type Transaction } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { AutoTopupAttemptRow, AutoTopupDisabledReason, DB } from '../db/schema';
import { createWalletIfMissing } from '../ledger/ensure-wallet';
import { UnknownTokenPackError } from '../topups/create-topup';

/** An attempt as the API, the console and the CLI show it (never the client secret). */
export interface AutoTopupAttemptView {
  id: string;
  /** `autotopup:{id}`: the top-up's reference and Stripe's idempotency key. */
  reference: string;
  packId: string;
  status: AutoTopupAttemptRow['status'];
  /** The available balance the triggering spend left, and the threshold it crossed. */
  availableAfter: number;
  threshold: number;
  paymentIntentId: string | null;
  failureCode: string | null;
  requiresAction: boolean;
  tries: number;
  createdAt: string;
  finishedAt: string | null;
}

/** A user's auto top-up as `GET /v1/users/{userId}/auto-topup` answers it. */
export interface AutoTopupView {
  userId: string;
  /** False when never set, turned off by the app, or disabled by Tally (`disabledReason`). */
  enabled: boolean;
  packId: string | null;
  threshold: number | null;
  monthlyLimit: number | null;
  disabledReason: AutoTopupDisabledReason | null;
  failuresInARow: number;
  /** The card `setup_intent.succeeded` saved; auto top-up charges nothing without one. */
  paymentMethod: { id: string; customerId: string; savedAt: string } | null;
  /** Attempts this calendar month (UTC) that count against the limit: in flight or succeeded. */
  thisMonth: number;
  inFlight: AutoTopupAttemptView | null;
}

export function attemptViewOf(row: AutoTopupAttemptRow): AutoTopupAttemptView {
  return {
    id: row.id,
    reference: `autotopup:${row.id}`,
    packId: row.pack_id,
    status: row.status,
    availableAfter: Number(row.available_after),
    threshold: Number(row.threshold),
    paymentIntentId: row.payment_intent_id,
    failureCode: row.failure_code,
    requiresAction: row.requires_action,
    tries: row.tries,
    createdAt: new Date(row.created_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
  };
}

/** The user's auto top-up: settings, saved card, this month's count and the attempt in flight, in one statement. */
export async function readAutoTopup(db: Kysely<DB> | Transaction<DB>, userId: string): Promise<AutoTopupView> {
  const result = await sql<{
    settings: Record<string, unknown> | null;
    method: { payment_method_id: string; stripe_customer_id: string; saved_at: string } | null;
    this_month: number;
    in_flight: AutoTopupAttemptRow | null;
  }>`
    SELECT (SELECT row_to_json(s) FROM auto_topup_settings s WHERE s.user_id = ${userId}) AS settings,
           (SELECT row_to_json(pm) FROM saved_payment_methods pm WHERE pm.user_id = ${userId}) AS method,
           (SELECT count(*) FROM auto_topup_attempts a
             WHERE a.user_id = ${userId} AND a.status IN ('pending', 'processing', 'succeeded')
               AND a.created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::int AS this_month,
           (SELECT row_to_json(a) FROM auto_topup_attempts a
             WHERE a.user_id = ${userId} AND a.status IN ('pending', 'processing')) AS in_flight`.execute(db);
  const row = result.rows[0];
  const settings = row?.settings ?? null;
  const method = row?.method ?? null;
  return {
    userId,
    enabled: settings?.enabled === true,
    packId: settings ? String(settings.pack_id) : null,
    threshold: settings ? Number(settings.threshold) : null,
    monthlyLimit: settings ? Number(settings.monthly_limit) : null,
    disabledReason: (settings?.disabled_reason as AutoTopupDisabledReason | null | undefined) ?? null,
    failuresInARow: settings ? Number(settings.failures_in_a_row) : 0,
    paymentMethod: method
      ? {
          id: method.payment_method_id,
          customerId: method.stripe_customer_id,
          savedAt: new Date(method.saved_at).toISOString(),
        }
      : null,
    thisMonth: Number(row?.this_month ?? 0),
    inFlight: row?.in_flight ? attemptViewOf(row.in_flight) : null,
  };
}

export interface AutoTopupSettingsInput {
  packId: string;
  threshold: number;
  monthlyLimit: number;
  enabled: boolean;
}

/**
 * `PUT …/auto-topup` (docs/auto-topup.md): sets the user's settings whole. The pack must be one
 * the catalog sells through Stripe (UnknownTokenPackError). Enabling clears the failures in a row
 * and why Tally turned it off (the app enabling it again is what turns it back on); turning it off
 * leaves an attempt already charging to finish. Idempotent: the same body again changes nothing
 * that matters. Answers the auto top-up as it is then.
 */
export async function setAutoTopup(
  deps: { db: Kysely<DB>; catalog: Catalog },
  userId: string,
  input: AutoTopupSettingsInput,
): Promise<AutoTopupView> {
  const pack = deps.catalog.findTokenPackById(input.packId);
  if (!pack || pack.amountMinor === undefined || pack.currency === undefined)
    throw new UnknownTokenPackError(input.packId);
  return deps.db.transaction().execute(async (trx) => {
    await createWalletIfMissing(trx, userId);
    await trx
      .insertInto('auto_topup_settings')
      .values({
        user_id: userId,
        pack_id: input.packId,
        threshold: input.threshold,
        monthly_limit: input.monthlyLimit,
        enabled: input.enabled,
      })
      .onConflict((conflict) =>
        conflict.column('user_id').doUpdateSet({
          pack_id: input.packId,
          threshold: input.threshold,
          monthly_limit: input.monthlyLimit,
          enabled: input.enabled,
          // guard: auto-topup-enable-clears-failures
          failures_in_a_row: input.enabled ? 0 : sql`auto_topup_settings.failures_in_a_row`,
          disabled_reason: input.enabled ? null : sql`auto_topup_settings.disabled_reason`,
          updated_at: sql`now()`,
        }),
      )
      .execute();
    return readAutoTopup(trx, userId);
  });
}

/** `DELETE …/auto-topup`: forgets the settings (the saved card stays). Idempotent. */
export async function removeAutoTopup(db: Kysely<DB>, userId: string): Promise<AutoTopupView> {
  await db.deleteFrom('auto_topup_settings').where('user_id', '=', userId).execute();
  return readAutoTopup(db, userId);
}

/** The user's attempts, newest first (the console, the admin API, the CLI). */
export async function listAutoTopupAttempts(
  db: Kysely<DB> | Transaction<DB>,
  userId: string,
  limit = 20,
): Promise<AutoTopupAttemptView[]> {
  const rows = await db
    .selectFrom('auto_topup_attempts')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(attemptViewOf);
}
