import type { Kysely } from 'kysely';
import type { DB } from '../db/schema';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
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
