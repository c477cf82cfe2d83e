import { useDatabase } from '@tally/platform/testing';
import { sql } from 'kysely';
import { captureHold, releaseHold } from '../holds/end-hold';
import { readWalletFunds } from '../ledger/held-tokens';
import { verifyLedger } from '../ledger/verify-ledger';
import { settleLapsedHoldsPass } from '../lot-expiry/expire-lots';
import { refundStudioRequest } from '../studio/refund-studio-request';
import { debitGeneration, fundWallet, placeTestHold } from '../testing/fund-wallet';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { inUnitOfWork, type UnitOfWork } from '../unit-of-work/unit-of-work';
import { grantTokens } from './grant-tokens';
import { voidLot } from './void-lot';

/**
 * A void is a standing state of its lot (docs/lots.md "Voids", product.md "What a void means"):
 * tokens that come back to a voided lot later (a hold on it released, captured for less or
 * lapsed, a failed generation's refund) are taken at once under `lot:{lotId}:voided:{n}`, and a
 * second void takes whatever is unheld now. Real Postgres, the billing-core use cases themselves.
 */
describe('a voided lot keeps nothing the user can spend', () => {
  const database = useDatabase(createTestDatabase);

  const run = <T>(work: (uow: UnitOfWork) => Promise<T>) => inUnitOfWork({ db: database.db, outbox: testOutbox }, work);
  const funds = (userId: string) => readWalletFunds(database.db, userId, { lock: false });
  const lotOf = async (userId: string, source: string) =>
    database.db
      .selectFrom('credit_lots')
      .select(['id', 'remaining', 'void_takes'])
      .where('user_id', '=', userId)
      .where('source', '=', source)
      .executeTakeFirstOrThrow();
  const voidEntries = (userId: string) =>
    database.db
      .selectFrom('ledger_entries')
      .select(['reference', 'amount', 'balance_after', 'reason'])
      .where('user_id', '=', userId)
      .where('reason', '=', 'lot_voided')
      .orderBy('id')
      .execute();

  /** A promotional lot of 100 and a purchased lot of 50; 5 spent from the promo lot by a generation in flight; a hold of 40 on it. */
  async function voidableWallet(userId: string) {
    await run((uow) =>
      grantTokens(uow, { userId, reference: `grant:${userId}:promo`, amount: 100, reason: 'test', expiresAt: null }),
    );
    await fundWallet(database.db, userId, 50, `test:${userId}:pack`);
    // A generation's debit: promotional before purchased, so it draws from the promo lot.
    await run((uow) => debitGeneration(uow, userId, 5));
    const hold = await run((uow) => placeTestHold(uow, userId, `${userId}-hold`, 40));
    const promo = await lotOf(userId, `grant:${userId}:promo`);
    return { promoLotId: Number(promo.id), holdId: hold.hold.id };
  }

  it('takes what a released hold and a failed generation give back to it, and a second void takes what is unheld now', async () => {
    const userId = 'void-standing';
    const { promoLotId, holdId } = await voidableWallet(userId);
    expect(await funds(userId)).toEqual({ balance: 145, held: 40, available: 105 });

    const first = await run((uow) => voidLot(uow, { userId, lotId: promoLotId }));
    expect(first).toEqual({
      kind: 'voided',
      answer: { lotId: promoLotId, ledgerReference: `lot:${promoLotId}:voided`, taken: 55, balance: 90 },
    });
    expect(await funds(userId)).toEqual({ balance: 90, held: 40, available: 50 });

    // The app releases the hold: its 40 come back to the voided lot and are taken at once.
    const released = await run((uow) => releaseHold(uow, { userId, holdId }));
    expect(released).toMatchObject({ kind: 'ended', answer: { status: 'released', available: 50 } });
    expect(await funds(userId)).toEqual({ balance: 50, held: 0, available: 50 });

    // The generation fails: its refund returns 5 to the voided lot, taken at once too.
    await run((uow) => refundStudioRequest(uow, { id: 0, publicId: `${userId}-gen` }));
    expect(await funds(userId)).toEqual({ balance: 50, held: 0, available: 50 });

    const second = await run((uow) => voidLot(uow, { userId, lotId: promoLotId }));
    expect(second).toEqual({
      kind: 'already-voided',
      answer: { lotId: promoLotId, ledgerReference: `lot:${promoLotId}:voided`, taken: 0, balance: 50 },
    });
    expect(await voidEntries(userId)).toEqual([
      { reference: `lot:${promoLotId}:voided`, amount: -55, balance_after: 90, reason: 'lot_voided' },
      { reference: `lot:${promoLotId}:voided:2`, amount: -40, balance_after: 50, reason: 'lot_voided' },
      { reference: `lot:${promoLotId}:voided:3`, amount: -5, balance_after: 50, reason: 'lot_voided' },
    ]);
    // Every token of the voided lot was taken (55 + 40 + 5 = 100); the pack's 50 are untouched.
    expect(await lotOf(userId, `grant:${userId}:promo`)).toEqual({ id: promoLotId, remaining: 0, void_takes: 3 });
    expect(await lotOf(userId, `test:${userId}:pack`)).toMatchObject({ remaining: 50 });
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });

  it('takes what a capture for less and a lapsed hold free on a voided lot', async () => {
    const userId = 'void-capture';
    const { promoLotId, holdId } = await voidableWallet(userId);
    const lapsing = await run((uow) => placeTestHold(uow, userId, `${userId}-lapsing`, 10));
    await run((uow) => voidLot(uow, { userId, lotId: promoLotId }));
    // 100 - 5 spent - 40 - 10 held: 45 taken; balance 145 - 45.
    expect(await funds(userId)).toEqual({ balance: 100, held: 50, available: 50 });

    const captured = await run((uow) => captureHold(uow, { userId, holdId, amount: 15 }));
    expect(captured).toMatchObject({
      kind: 'ended',
      answer: { captured: 15, released: 25, balance: 60, available: 50 },
    });
    await sql`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = ${lapsing.hold.id}`.execute(
      database.db,
    );
    await settleLapsedHoldsPass({ db: database.db, outbox: testOutbox }, { batchSize: 10 });
    expect(await funds(userId)).toEqual({ balance: 50, held: 0, available: 50 });
    expect((await voidEntries(userId)).map((entry) => [entry.reference, entry.amount])).toEqual([
      [`lot:${promoLotId}:voided`, -45],
      [`lot:${promoLotId}:voided:2`, -25],
      [`lot:${promoLotId}:voided:3`, -10],
    ]);
    expect(await verifyLedger(database.db)).toMatchObject({ ok: true, discrepancies: [] });
  });
});
