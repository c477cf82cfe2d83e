import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import { releaseHold } from '../holds/end-hold';
import { postLedgerEntry } from '../ledger/post-ledger-entry';
import { verifyLedger } from '../ledger/verify-ledger';
import { refundStudioRequest } from '../studio/refund-studio-request';
import { debitGeneration, placeTestHold } from '../testing/fund-wallet';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork, type UnitOfWork } from '../unit-of-work/unit-of-work';
import { expireDueLots } from './expire-lots';

/**
 * The rollover allowance is remembered by its lot (docs/lots.md "Expiry and rollover", product.md
 * "What a rollover keeps"): tokens an expired lot frees later (a hold on it released, a late
 * give-back) roll over until rolloverMax is reached, so the rollover equals the one without the
 * hold or the generation in flight. Real Postgres; time moved by setting expires_at in the past.
 */
describe('a lot expiring with tokens held or in flight keeps its rollover', () => {
  const database = useDatabase(createTestDatabase);

  const deps = () => ({ db: database.db, outbox: testOutbox });
  const run = <T>(work: (uow: UnitOfWork) => Promise<T>) => inUnitOfWork(deps(), work);
  const sweep = () => expireDueLots(deps(), { batchSize: 100 });

  /** A subscription lot of 100 with rolloverMax `max`, expiring in an hour (then moved into the past). */
  async function periodLot(userId: string, max: number): Promise<number> {
    await run((uow) =>
      postLedgerEntry(uow, {
        userId,
        reference: `test:${userId}:period`,
        amount: 100,
        reason: 'test',
        lots: {
          kind: 'credit',
          category: 'subscription',
          expiresAt: new Date(Date.now() + 3_600_000),
          rolloverMax: max,
        },
      }),
    );
    const lot = await database.db
      .selectFrom('credit_lots')
      .select('id')
      .where('source', '=', `test:${userId}:period`)
      .executeTakeFirstOrThrow();
    return Number(lot.id);
  }
  const expire = (lotId: number) =>
    sql`UPDATE credit_lots SET expires_at = now() - interval '1 second' WHERE id = ${lotId}`.execute(database.db);
  /** What the period came to: the rollover lot's tokens and the tokens expired, with the balance. */
  async function outcomeOf(userId: string, lotId: number) {
    const rollover = await database.db
      .selectFrom('credit_lots')
      .select(['amount', 'remaining'])
      .where('source', '=', `lot:${lotId}:rollover`)
      .executeTakeFirst();
    const expired = await sql<{ total: number }>`
      SELECT coalesce(-sum(amount), 0)::int AS total FROM ledger_entries
       WHERE user_id = ${userId} AND reason = 'credits_expired'`.execute(database.db);
    const wallet = await database.db
      .selectFrom('wallets')
      .select('balance')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return { rolledOver: rollover?.amount ?? 0, expired: expired.rows[0]?.total ?? 0, balance: wallet.balance };
  }

  async function withHoldAtExpiry(userId: string, max: number) {
    const lotId = await periodLot(userId, max);
    const hold = await run((uow) => placeTestHold(uow, userId, `${userId}-hold`, 10));
    await expire(lotId);
    await sweep();
    await run((uow) => releaseHold(uow, { userId, holdId: hold.hold.id }));
    await sweep();
    return outcomeOf(userId, lotId);
  }

  async function withoutHold(userId: string, max: number) {
    const lotId = await periodLot(userId, max);
    await expire(lotId);
    await sweep();
    return outcomeOf(userId, lotId);
  }

  it('rolls over what a hold open at the expiry frees after it, up to rolloverMax, as without the hold', async () => {
    expect(await withoutHold('roll-plain-100', 100)).toEqual({ rolledOver: 100, expired: 0, balance: 100 });
    expect(await withHoldAtExpiry('roll-held-100', 100)).toEqual({ rolledOver: 100, expired: 0, balance: 100 });
    // An allowance of 50: the first sweep carries 50 of the 90 unheld and expires 40; the 10 freed
    // later find the allowance used and expire.
    expect(await withoutHold('roll-plain-50', 50)).toEqual({ rolledOver: 50, expired: 50, balance: 50 });
    expect(await withHoldAtExpiry('roll-held-50', 50)).toEqual({ rolledOver: 50, expired: 50, balance: 50 });
    // 95: 90 at the first sweep, 5 of the 10 freed later.
    expect(await withHoldAtExpiry('roll-held-95', 95)).toEqual({ rolledOver: 95, expired: 5, balance: 95 });
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('rolls over what a late give-back returns to the expired lot (a failed generation refunded after the expiry)', async () => {
    const userId = 'roll-give-back';
    const lotId = await periodLot(userId, 100);
    await run((uow) => debitGeneration(uow, userId, 10));
    await expire(lotId);
    await sweep();
    expect(await outcomeOf(userId, lotId)).toEqual({ rolledOver: 90, expired: 0, balance: 90 });
    await run((uow) => refundStudioRequest(uow, { id: 0, publicId: `${userId}-gen` }));
    await sweep();
    expect(await outcomeOf(userId, lotId)).toEqual({ rolledOver: 100, expired: 0, balance: 100 });
    const lot = await database.db
      .selectFrom('credit_lots')
      .select(['remaining', 'rolled_over'])
      .where('id', '=', lotId)
      .executeTakeFirstOrThrow();
    expect(lot).toEqual({ remaining: 0, rolled_over: 100 });
  });
});
