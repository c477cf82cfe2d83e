import { randomUUID } from 'node:crypto';
import { type InsertObject, sql } from 'kysely';
import { triggerAutoTopup } from '../auto-topup/trigger-auto-topup';
import type { Catalog } from '../catalog/catalog';
import type { Clock } from '../clock';
import { lockStudioUser, studioUserLock } from '../db/lock-studio-user';
import type { DB, StudioRequestRow } from '../db/schema';
import { InsufficientBalanceError } from '../errors';
import { lockWalletForSpend } from '../holds/lock-wallet-funds';
import {
  answerAfterConflict,
  keptAnswerInsert,
  takeIdempotencyKeyInTransaction,
} from '../idempotency/idempotency-key-in-transaction';
import {
  AnsweredByIdempotencyKeyError,
  type IdempotencyInTransaction,
  type IdempotencyKeyVerdict,
} from '../idempotency/idempotency-types';
import { ensureWallet } from '../ledger/ensure-wallet';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import { type SpendLimitDefaults, type SpendLimitRefusal, spendLimitRefusal } from '../spend-limits/spend-limits';
import { inUnitOfWork, type UnitOfWorkDeps } from '../unit-of-work/unit-of-work';
import { priceStudioRequest, type StudioRequestSpec, toUtcDay } from './price-studio-request';
import { decideStudioCharge } from './studio-charge';

export interface CreateStudioRequestInput extends StudioRequestSpec {
  /**
   * The canonical user (resolveUserId), never an alias: the allowance is counted, the lock taken
   * and the debit posted on this id, so two linked ids of one user share one count and one wallet.
   */
  userId: string;
  /** What the AI service generates from; stored as JSON and sent as is. */
  input: unknown;
}

/**
 * What a created request's answer is made of (the API's 202): every field is fixed before the
 * row is written, so the answer can be kept under an idempotency key by the insert itself.
 */
export type StudioRequestReceipt = Pick<StudioRequestRow, 'public_id' | 'status' | 'tokens_charged' | 'free_tier'>;

export type CreateStudioRequestResult =
  /** `answerKept`: the finished key (the answer of the receipt) committed with the request and its debit. */
  | { kind: 'created'; request: StudioRequestRow; answerKept: boolean }
  /** Nothing was written: no request row, no ledger row. */
  | { kind: 'insufficient-balance'; balance: number; available: number; price: number }
  /** A spend limit refuses the price (402 spend_limit_reached): nothing was written. */
  | { kind: 'spend-limit'; refusal: SpendLimitRefusal }
  /** The key answers instead of this attempt (replay, 422, 409): nothing was written. */
  | { kind: 'answered-by-key'; verdict: IdempotencyKeyVerdict };

/**
 * Creates an AI Studio request and pays for it in one transaction (the row and its debit
 * `studio:{publicId}:debit`, or a free slot of the per-user, kind and UTC-day allowance, counted
 * under the user's advisory lock); the caller enqueues the generation after commit. With
 * `idempotency` the key is taken and its answer written in the same transaction
 * (docs/idempotency.md#the-studio-post-the-key-inside-the-requests-transaction), so a retry never
 * charges twice. A paid request past a spend limit (spendLimitRefusal) writes nothing. Throws
 * InvalidStudioRequestError for a request the catalog does not price.
 */
export async function createStudioRequest(
  deps: UnitOfWorkDeps & { catalog: Catalog; clock: Clock; spendLimits: SpendLimitDefaults },
  request: CreateStudioRequestInput,
  idempotency?: IdempotencyInTransaction<StudioRequestReceipt>,
): Promise<CreateStudioRequestResult> {
  const price = priceStudioRequest(deps.catalog, request);
  const at = deps.clock.now();
  const usageDay = toUtcDay(at);
  try {
    const created = await inUnitOfWork(deps, async (uow) => {
      const { trx } = uow;
      // The user lock first, before any row lock: every studio create takes them in this order.
      if (idempotency) {
        await takeIdempotencyKeyInTransaction(trx, idempotency, { thenLock: studioUserLock(request.userId) });
      } else {
        await lockStudioUser(trx, request.userId);
      }
      await ensureWallet(uow, request.userId);
      const { freeTier, tokens, allowanceGroup } = await decideStudioCharge(trx, { userId: request.userId, at, price });
      const receipt: StudioRequestReceipt = {
        public_id: randomUUID(),
        status: 'received',
        tokens_charged: tokens,
        free_tier: freeTier,
      };
      const values = {
        ...receipt,
        user_id: request.userId,
        kind: request.kind,
        duration_seconds: request.durationSeconds ?? null,
        full: request.full ?? false,
        input: JSON.stringify(request.input ?? null),
        price_tokens: price.priceTokens,
        usage_day: usageDay,
        allowance_group: allowanceGroup,
        enqueued_at: sql<Date>`now()`,
      } satisfies InsertObject<DB, 'studio_requests'>;
      // With a key, the same statement writes the finished key (`kept`): no statement of its own.
      const answer = idempotency?.answer(receipt);
      const { key_kept: keyKept, ...row } =
        idempotency && answer
          ? await trx
              .with('kept', () => sql<{ id: number }>`(${keptAnswerInsert(idempotency, answer)})`)
              .insertInto('studio_requests')
              .values(values)
              .returningAll()
              .returning(sql<boolean>`EXISTS (SELECT 1 FROM kept)`.as('key_kept'))
              .executeTakeFirstOrThrow()
          : {
              ...(await trx.insertInto('studio_requests').values(values).returningAll().executeTakeFirstOrThrow()),
              key_kept: null,
            };
      // guard: studio-key-kept
      if (idempotency && answer && !keyKept) {
        // A key stands under (user, key) (a retry of a used key, or another attempt committed it
        // after this one took the try-lock): it answers and this one rolls back, unless it is a
        // dead claim this attempt may take over.
        const decided = await answerAfterConflict(trx, idempotency, answer);
        if (decided !== 'kept') throw new AnsweredByIdempotencyKeyError(decided);
      }
      if (!freeTier) {
        // The wallet lock first, settling lapsed holds; the debit spends only what no active hold
        // reserves (its 402 looks at `available`).
        const funds = await lockWalletForSpend(uow, request.userId);
        const refusal = spendLimitRefusal(funds.spend, deps.spendLimits, funds.held, price.priceTokens);
        // guard: studio-spend-limit
        if (refusal) throw new SpendLimitReached(refusal);
        if (funds.available < price.priceTokens) {
          throw new InsufficientBalanceError(
            request.userId,
            funds.balance,
            price.priceTokens,
            Math.max(0, funds.available),
          );
        }
        await postLedgerEntry(uow, {
          userId: request.userId,
          reference: references.studioDebit(row.public_id),
          amount: -price.priceTokens,
          reason: `studio_${price.priceKey}`,
          lots: { kind: 'spend' },
        });
        // guard: studio-triggers-auto-topup
        await triggerAutoTopup(uow, request.userId, funds.autoTopup, funds.available - price.priceTokens);
      }
      return row;
    });
    return { kind: 'created', request: created, answerKept: idempotency !== undefined };
  } catch (error) {
    if (error instanceof InsufficientBalanceError) {
      return {
        kind: 'insufficient-balance',
        balance: error.balance,
        available: error.available,
        price: price.priceTokens,
      };
    }
    if (error instanceof AnsweredByIdempotencyKeyError) return { kind: 'answered-by-key', verdict: error.verdict };
    if (error instanceof SpendLimitReached) return { kind: 'spend-limit', refusal: error.refusal };
    throw error;
  }
}

/** Rolls the request's transaction back (its row, its key) when a spend limit refuses its debit. */
class SpendLimitReached extends Error {
  constructor(readonly refusal: SpendLimitRefusal) {
    super(`the ${refusal.period} spend limit of ${refusal.limit} tokens is reached`);
  }
}
