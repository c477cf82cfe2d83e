import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import { lockWalletFunds } from '../holds/lock-wallet-funds';
import { placeHold } from '../holds/place-hold';
import { verifyLedger } from '../ledger/verify-ledger';
import { noSpendLimits } from '../spend-limits/spend-limits';
import { fundWallet } from '../testing/fund-wallet';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork } from '../unit-of-work/unit-of-work';
import { recordTakeBackShortfall } from './take-back-shortfalls';

/**
 * What a lapsed hold's tokens settle when the next operation on the wallet settles it
 * (settleLapsedHolds, recoverShortfallsFromHold): the shortfalls of take-backs that ran while the
 * hold was active, never one recorded after it lapsed (that take-back saw its tokens free and took
 * them itself). The take-backs here are recorded directly, as a take-back that does not settle
 * lapsed holds first would record them.
 */
describe('take-back shortfalls settled by a lapsed hold', () => {
  const database = useDatabase(createTestDatabase);
  const deps = () => ({ db: database.db, outbox: testOutbox });

  async function lapsedHoldWithShortfall(userId: string, recordShortfall: 'while-active' | 'after-lapse') {
    await fundWallet(database.db, userId, 50, `test:fund:${userId}`);
    const placed = await inUnitOfWork(deps(), (uow) =>
      placeHold(uow, {
        userId,
        reference: 'lapsing',
        amount: 30,
        reason: 'test',
        expiresInSeconds: 1,
        spendLimits: noSpendLimits,
      }),
    );
    if (placed.kind !== 'placed') throw new Error(placed.kind);
    const shortfall = () =>
      inUnitOfWork(deps(), (uow) =>
        recordTakeBackShortfall(uow, {
          userId,
          source: 'priced_capture',
          sourceId: `${userId}-take-back`,
          takeBackReference: `test:take-back:${userId}`,
          tokens: 20,
        }),
      );
    if (recordShortfall === 'while-active') await shortfall();
    // Past the hold's expires_at by the database clock.
    await sql`SELECT pg_sleep(1.2)`.execute(database.db);
    if (recordShortfall === 'after-lapse') await shortfall();
    // The next operation on the wallet settles the lapsed hold.
    await inUnitOfWork(deps(), (uow) => lockWalletFunds(uow, userId));
    const recovered = await database.db
      .selectFrom('take_back_shortfalls')
      .select(['recovered'])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const entries = await database.db
      .selectFrom('ledger_entries')
      .select(['amount', 'reason'])
      .where('user_id', '=', userId)
      .where('reason', '=', 'take_back_recovered')
      .execute();
    return { recovered: Number(recovered.recovered), entries };
  }

  it('settles a shortfall recorded while the hold was active with the tokens it frees', async () => {
    expect(await lapsedHoldWithShortfall('tbs-active', 'while-active')).toEqual({
      recovered: 20,
      entries: [{ amount: -20, reason: 'take_back_recovered' }],
    });
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });

  it('leaves alone a shortfall recorded after the hold lapsed (its take-back could take those tokens)', async () => {
    expect(await lapsedHoldWithShortfall('tbs-after', 'after-lapse')).toEqual({ recovered: 0, entries: [] });
    expect((await verifyLedger(database.db)).ok).toBe(true);
  });
});
