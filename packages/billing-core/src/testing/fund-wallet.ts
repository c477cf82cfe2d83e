import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { placeHold } from '../holds/place-hold';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
import { noSpendLimits } from '../spend-limits/spend-limits';
import { inUnitOfWork, type UnitOfWork } from '../unit-of-work/unit-of-work';
import { testOutbox } from './test-outbox';

/** Credits a user `tokens` purchased, never-expiring tokens for a test, under `reference`. */
export function fundWallet(db: Kysely<DB>, userId: string, tokens: number, reference: string) {
  return inUnitOfWork({ db, outbox: testOutbox }, (uow) =>
    postLedgerEntry(uow, {
      userId,
      reference,
      amount: tokens,
      reason: 'test',
      lots: { kind: 'credit', category: 'purchased', expiresAt: null },
    }),
  );
}

/** A studio generation's debit of `tokens` as the studio posts it (`studio:{userId}-gen:debit`), in the unit. */
export function debitGeneration(uow: UnitOfWork, userId: string, tokens: number) {
  return postLedgerEntry(uow, {
    userId,
    reference: references.studioDebit(`${userId}-gen`),
    amount: -tokens,
    reason: 'studio_debit',
    lots: { kind: 'spend' },
  });
}

/** A hold of `amount` for ten minutes under `reference`, in the unit, no spend limit applied; throws unless placed. */
export async function placeTestHold(uow: UnitOfWork, userId: string, reference: string, amount: number) {
  const placed = await placeHold(uow, {
    userId,
    reference,
    amount,
    reason: 'test',
    expiresInSeconds: 600,
    spendLimits: noSpendLimits,
  });
  if (placed.kind !== 'placed') throw new Error(`hold ${reference} not placed: ${placed.kind}`);
  return placed;
}
