import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { DB, GooglePlayPurchaseRow } from '../../db/schema';
import { BillingError, isRetryable, toErrorText } from '../../errors';
import type { GooglePlayApi } from '../../ports/google-play-api';
import { type BackoffSettings, computeBackoffDelayMs } from '../../scheduling/backoff';

export interface GooglePlayConsumeDeps {
  db: Kysely<DB>;
  googlePlay: GooglePlayApi | undefined;
  /** A claimed row is not claimed again before this (GOOGLE_PLAY_CONSUME_LEASE_MS): longer than a call. */
  leaseMs: number;
  /** Delay before asking Google again after a failure; doubles up to the max. */
  backoff: BackoffSettings;
}

/**
 * What one run of a consume came to (the worker's `tally_google_play_consumes_total{outcome}`):
 * consumed; Google says it was consumed already; Google no longer has it purchased (refunded or
 * revoked: nothing left to protect); failed and asked again later.
 */
export const googlePlayConsumeOutcomes = ['consumed', 'already_consumed', 'not_purchased', 'retry'] as const;
export type GooglePlayConsumeOutcome = (typeof googlePlayConsumeOutcomes)[number];

/**
 * Claims due consumes (pending, due, lease free): tries + 1, leased for leaseMs, SKIP LOCKED, so
 * any number of loops may run. A claim whose worker died is due again when its lease ends.
 */
export async function claimGooglePlayConsumes(
  db: Kysely<DB>,
  options: { leaseMs: number; batchSize: number },
): Promise<GooglePlayPurchaseRow[]> {
  const { rows } = await sql<GooglePlayPurchaseRow>`
    UPDATE google_play_purchases
       SET consume_tries = consume_tries + 1, consume_locked_until = now() + ${sqlMilliseconds(options.leaseMs)},
           updated_at = now()
     WHERE order_id IN (SELECT order_id FROM google_play_purchases
                         WHERE consume_status = 'pending' AND consume_next_attempt_at <= now()
                           AND (consume_locked_until IS NULL OR consume_locked_until <= now())
                         ORDER BY consume_next_attempt_at LIMIT ${options.batchSize}
                         FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db);
  return rows;
}

/**
 * Consumes one claimed purchase with `purchases.products.consume`, after the credit committed and
 * outside any transaction (a consume inside the credit's transaction would tell Google the pack
 * was delivered before it was, and a rollback could not take it back). Each answer is recorded
 * in a statement of its own. A refusal is checked against `purchases.products.get`: consumed
 * already ends it; no longer purchased ends it too (the void takes the tokens back); anything
 * else, and every unavailability, is asked again after a backoff, until Google says consumed.
 */
export async function runGooglePlayConsume(
  deps: GooglePlayConsumeDeps,
  row: GooglePlayPurchaseRow,
): Promise<{ outcome: GooglePlayConsumeOutcome; error?: string }> {
  const api = deps.googlePlay;
  if (!api) return retry(deps, row, 'the Play Developer API (GOOGLE_SERVICE_ACCOUNT_KEY_PATH) is not configured');
  try {
    // guard: google-consume-after-commit
    await api.consumeProductPurchase(row.product_id, row.purchase_token);
    await finish(deps.db, row, 'consumed');
    return { outcome: 'consumed' };
  } catch (error) {
    // guard: google-consume-retried
    if (isRetryable(error)) return retry(deps, row, toErrorText(error));
    // Refused (4xx): Google may already have it consumed, or no longer purchased.
    try {
      const purchase = await api.getProductPurchase(row.product_id, row.purchase_token);
      if (purchase.consumptionState === 1) {
        await finish(deps.db, row, 'consumed');
        return { outcome: 'already_consumed' };
      }
      if (purchase.purchaseState !== 0) {
        await finish(
          deps.db,
          row,
          'voided',
          `Google says purchaseState ${purchase.purchaseState}: ${toErrorText(error)}`,
        );
        return { outcome: 'not_purchased' };
      }
    } catch (readError) {
      const code = readError instanceof BillingError ? readError.code : 'error';
      return retry(deps, row, `${toErrorText(error)}; the re-read failed too (${code})`);
    }
    return retry(deps, row, toErrorText(error));
  }
}

async function finish(db: Kysely<DB>, row: GooglePlayPurchaseRow, status: 'consumed' | 'voided', note?: string) {
  await db
    .updateTable('google_play_purchases')
    .set({
      consume_status: status,
      consumed_at: status === 'consumed' ? sql`now()` : null,
      consume_locked_until: null,
      consume_last_error: note ?? null,
      updated_at: sql`now()`,
    })
    .where('order_id', '=', row.order_id)
    .where('consume_status', '=', 'pending')
    .execute();
}

async function retry(
  deps: GooglePlayConsumeDeps,
  row: GooglePlayPurchaseRow,
  error: string,
): Promise<{ outcome: 'retry'; error: string }> {
  const delayMs = computeBackoffDelayMs(row.consume_tries, deps.backoff);
  await deps.db
    .updateTable('google_play_purchases')
    .set({
      consume_locked_until: null,
      consume_next_attempt_at: sql`now() + ${sqlMilliseconds(delayMs)}`,
      consume_last_error: error,
      updated_at: sql`now()`,
    })
    .where('order_id', '=', row.order_id)
    .where('consume_status', '=', 'pending')
    .execute();
  return { outcome: 'retry', error };
}

/** The oldest purchase still waiting to be consumed, in seconds (0 when none): Google refunds at three days. */
export async function oldestUnconsumedAgeSeconds(db: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ age: string | null }>`
    SELECT extract(epoch FROM now() - min(created_at)) AS age FROM google_play_purchases WHERE consume_status = 'pending'`.execute(
    db,
  );
  return Math.max(0, Number(rows[0]?.age ?? 0));
}
