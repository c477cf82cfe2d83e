import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { references } from '../references';
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
