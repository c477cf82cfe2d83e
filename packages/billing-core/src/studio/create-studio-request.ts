import { sql } from 'kysely';
import type { Catalog } from '../catalog/catalog';
import type { Clock } from '../clock';
import type { StudioRequestRow } from '../db/schema';
import { InsufficientBalanceError } from '../errors';
import { finishIdempotencyKey } from '../idempotency/finish-idempotency-key';
import type { IdempotencyBinding } from '../idempotency/idempotency-types';
import { ensureWallet } from '../ledger/ensure-wallet';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { inOutboxTransaction, type OutboxDeps } from '../outbox/outbox-transaction';
import { references } from '../references';
import { lockStudioUser } from './lock-studio-user';
import { priceStudioRequest, type StudioRequestSpec, toUtcDay } from './price-studio-request';

export interface CreateStudioRequestInput extends StudioRequestSpec {
  /**
   * The canonical user (resolveUserId), never an alias: the allowance is counted, the lock taken
   * and the debit posted on this id, so two linked ids of one user share one count and one wallet.
   */
  userId: string;
  /** What the AI service generates from; stored as JSON and sent as is. */
  input: unknown;
}

export type CreateStudioRequestResult =
  | { kind: 'created'; request: StudioRequestRow }
  /** Nothing was written: no request row, no ledger row. */
  | { kind: 'insufficient-balance'; balance: number; price: number };

/**
 * Creates an AI Studio request and pays for it, in one transaction: the request row and its
 * debit (`studio:{publicId}:debit`) commit together or not at all. The caller enqueues the
 * generation after commit (the row is written with enqueued_at set; a failed hand-off is
 * released for the relay).
 *
 * Free allowance: per user, kind and UTC day (the injected clock decides the day), counting free
 * requests that did not fail, so a failed free generation gives its slot back. A per-user
 * advisory lock serialises the count and the insert: two concurrent free requests cannot both
 * take the last slot. Past the allowance the catalog price is debited through postLedgerEntry,
 * which re-checks the balance under the wallet lock; when it is short the whole transaction
 * rolls back and the result is `insufficient-balance`.
 *
 * Not idempotent by itself (each call is a new request). With `idempotency` (the API's
 * `Idempotency-Key`), the key's answer is stored by the same transaction, as its last statement:
 * the request, its debit and the answer a retry replays commit together or not at all, so a
 * process that dies after the commit and before answering cannot make a retry charge again.
 * Throws InvalidStudioRequestError for a request the catalog does not price, and
 * IdempotencyLeaseLostError (nothing written) when another attempt took the key over.
 */
export async function createStudioRequest(
  deps: OutboxDeps & { catalog: Catalog; clock: Clock },
  request: CreateStudioRequestInput,
  idempotency?: IdempotencyBinding<StudioRequestRow>,
): Promise<CreateStudioRequestResult> {
  const price = priceStudioRequest(deps.catalog.data.studio, request);
  const usageDay = toUtcDay(deps.clock.now());
  try {
    const created = await inOutboxTransaction(deps.db, deps.outbox, async (trx) => {
      await ensureWallet(trx, request.userId);
      await lockStudioUser(trx, request.userId);
      const used = await trx
        .selectFrom('studio_requests')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('user_id', '=', request.userId)
        .where('usage_day', '=', usageDay)
        .where('kind', '=', price.allowanceKind)
        .where('free_tier', '=', true)
        .where('status', '<>', 'failed')
        .executeTakeFirstOrThrow();
      const freeTier = Number(used.count) < price.allowancePerDay;
      const row = await trx
        .insertInto('studio_requests')
        .values({
          user_id: request.userId,
          kind: request.kind,
          duration_seconds: request.durationSeconds ?? null,
          full: request.full ?? false,
          input: JSON.stringify(request.input ?? null),
          price_tokens: price.priceTokens,
          tokens_charged: freeTier ? 0 : price.priceTokens,
          free_tier: freeTier,
          usage_day: usageDay,
          enqueued_at: sql`now()`,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (!freeTier) {
        await postLedgerEntry(trx, {
          userId: request.userId,
          reference: references.studioDebit(row.public_id),
          amount: -price.priceTokens,
          reason: `studio_${price.priceKey}`,
        });
      }
      if (idempotency) await finishIdempotencyKey(trx, idempotency.claim, idempotency.answer(row), { strict: true });
      return row;
    });
    return { kind: 'created', request: created };
  } catch (error) {
    if (error instanceof InsufficientBalanceError) {
      return { kind: 'insufficient-balance', balance: error.balance, price: price.priceTokens };
    }
    throw error;
  }
}
