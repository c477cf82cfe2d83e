import { sqlMilliseconds } from '@tally/platform/db';
import { sql } from 'kysely';
import type { StripeInstallmentRow } from '../db/schema';
import { LedgerReferenceConflictError, toErrorText } from '../errors';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import { inUnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';

export interface GrantInstallmentsOptions {
  batchSize: number;
  /** A row left in processing this long (its worker died mid-grant) is claimed again. */
  processingStaleAfterMs: number;
  /** A row that has started this many attempts without being granted is parked as failed. */
  maxAttempts: number;
}

export interface GrantInstallmentsResult {
  claimed: number;
  granted: number;
  alreadyGranted: number;
  failed: number;
}

/**
 * One pass of the installment loop. Claims due rows with a conditional update (scheduled →
 * processing, attempts + 1; FOR UPDATE SKIP LOCKED so replicas split the work), also reclaiming
 * rows stuck in processing; then grants each in its own transaction under
 * `stripe:installment:{rowId}` and marks it granted. A second loop on the same row finds nothing
 * to claim, and a reclaimed row that was in fact granted meets its ledger reference. A failing
 * row stays in processing and is retried after processingStaleAfterMs, except a ledger reference
 * conflict, which no retry fixes: that row is parked (`failed`) at once. Never throws for one row.
 */
export async function grantDueInstallments(
  deps: UnitOfWorkDeps,
  options: GrantInstallmentsOptions,
): Promise<GrantInstallmentsResult> {
  const { db } = deps;
  // guard: installment-stale-after-sql
  const stale = sql`now() - ${sqlMilliseconds(options.processingStaleAfterMs)}`;
  const claimed = await sql<StripeInstallmentRow>`
    UPDATE stripe_installments SET
      status = CASE WHEN attempts >= ${options.maxAttempts} THEN 'failed' ELSE 'processing' END,
      attempts = CASE WHEN attempts >= ${options.maxAttempts} THEN attempts ELSE attempts + 1 END,
      updated_at = now()
     WHERE id IN (
       SELECT id FROM stripe_installments
        WHERE (status = 'scheduled' AND due_at <= now())
           OR (status = 'processing' AND updated_at < ${stale})
        ORDER BY due_at, id
        LIMIT ${options.batchSize}
        FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db);
  const result: GrantInstallmentsResult = { claimed: 0, granted: 0, alreadyGranted: 0, failed: 0 };
  for (const row of claimed.rows) {
    if (row.status !== 'processing') continue;
    result.claimed += 1;
    try {
      const posted = await grantInstallment(deps, row);
      if (posted === 'posted') result.granted += 1;
      else if (posted === 'already-posted') result.alreadyGranted += 1;
    } catch (error) {
      result.failed += 1;
      // A reference conflict (the reference already posts another user or amount) can never
      // succeed: park the row at once with the conflict as its error instead of retrying it.
      // guard: installment-conflict-parked
      const conflict = error instanceof LedgerReferenceConflictError;
      await db
        .updateTable('stripe_installments')
        .set({
          last_error: toErrorText(error),
          ...(conflict ? { status: 'failed' as const, updated_at: sql`now()` } : {}),
        })
        .where('id', '=', row.id)
        .where('status', '=', 'processing')
        .execute();
    }
  }
  return result;
}

/**
 * Grants one claimed installment. The conditional update (processing → granted) comes first and
 * holds the row until commit: an installment voided meanwhile (its invoice refunded or disputed,
 * see voidInvoiceInstallments) is not granted, and a void that comes while this runs waits and
 * then finds it granted. It posts the tokens that update returns, never the claimed row's: a
 * partial refund that scaled the row after the claim (scaleInvoiceInstallments) is what counts.
 * A share scaled down to 0 is marked granted with no ledger entry.
 */
async function grantInstallment(
  deps: UnitOfWorkDeps,
  row: StripeInstallmentRow,
): Promise<'posted' | 'already-posted' | 'voided' | 'nothing'> {
  return inUnitOfWork(deps, async (uow) => {
    const { trx } = uow;
    const marked = await trx
      .updateTable('stripe_installments')
      .set({ status: 'granted', granted_at: sql`now()`, last_error: null, updated_at: sql`now()` })
      .where('id', '=', row.id)
      .where('status', '=', 'processing')
      .returning('tokens')
      .executeTakeFirst();
    if (!marked) return 'voided';
    const tokens = Number(marked.tokens);
    if (tokens === 0) return 'nothing';
    const posted = await postLedgerEntry(uow, {
      userId: row.user_id,
      reference: references.stripeInstallment(row.id),
      // guard: installment-grant-claimed-tokens
      amount: tokens,
      reason: 'subscription_installment',
      lots: {
        kind: 'credit',
        category: 'subscription',
        expiresAt: row.lot_expires_at,
        rolloverMax: row.lot_rollover_max,
      },
      settlesDebt: true,
    });
    return posted.kind;
  });
}
