import { useDatabase } from '@tally/platform/testing';
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { plainLots, postLedgerEntry } from '../ledger/post-ledger-entry';
import { createTestDatabase } from '../testing/test-services';
import type { AppWebhookOutbox } from './app-webhook-outbox';
import { inUnitOfWork, type UnitOfWork } from './unit-of-work';

describe('the unit of work', () => {
  const database = useDatabase(createTestDatabase);

  /** An outbox whose hand-off records what it was given. */
  function recordingOutbox(): AppWebhookOutbox & { handedOff: number[][] } {
    const handedOff: number[][] = [];
    return {
      lowBalanceThreshold: undefined,
      handOff: (ids) => {
        handedOff.push([...ids]);
        return undefined;
      },
      handedOff,
    };
  }

  const messageIdsOf = async (userId: string) =>
    (
      await database.db
        .selectFrom('app_webhook_messages')
        .select('id')
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute()
    ).map((row) => row.id);

  /** A plain credit of the test's user, in the unit's transaction. */
  const credit = (uow: UnitOfWork, reference: string, amount: number) =>
    postLedgerEntry(uow, { userId: 'uow-user', reference, amount, reason: 'test', lots: plainLots(amount) });

  it('hands off the messages its postings wrote once, after the commit, and nothing after a rollback', async () => {
    const outbox = recordingOutbox();
    let seenBeforeCommit: readonly number[] = [];
    await inUnitOfWork({ db: database.db, outbox }, async (uow) => {
      await credit(uow, 'test:uow:1', 10);
      await credit(uow, 'test:uow:2', 5);
      seenBeforeCommit = [...uow.outbox.messageIds];
      expect(outbox.handedOff).toEqual([]);
    });
    const committed = await messageIdsOf('uow-user');
    expect(committed).toHaveLength(2);
    expect(seenBeforeCommit).toEqual(committed);
    expect(outbox.handedOff).toEqual([committed]);

    await inUnitOfWork({ db: database.db, outbox }, async (uow) => {
      await credit(uow, 'test:uow:3', 1);
      throw new Error('rolled back');
    }).catch(() => undefined);
    expect(await messageIdsOf('uow-user')).toEqual(committed);
    expect(outbox.handedOff).toEqual([committed]);
  });

  it('cannot be replaced by a bare transaction (a compile error, checked by tsc)', () => {
    // Never called: the type check is the test. A Transaction is not a UnitOfWork, so a money
    // write cannot be made outside a unit opened with the process's outbox.
    const postWithBareTransaction = (trx: Transaction<DB>) =>
      // @ts-expect-error postLedgerEntry takes a UnitOfWork, not a Transaction
      postLedgerEntry(trx, { userId: 'x', reference: 'test:x', amount: 1, reason: 'test', lots: plainLots(1) });
    const asUnit = (trx: Transaction<DB>): UnitOfWork => {
      // @ts-expect-error a Transaction lacks the unit's outbox, clock and ensured wallets
      const uow: UnitOfWork = trx;
      return uow;
    };
    expect(typeof postWithBareTransaction).toBe('function');
    expect(typeof asUnit).toBe('function');
  });
});
