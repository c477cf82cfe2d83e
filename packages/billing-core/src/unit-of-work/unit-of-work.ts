import { commitWith, runInTransaction, type TransactionDecision } from '@tally/platform/db';
import { type Kysely, sql, type Transaction } from 'kysely';
import { type Clock, systemClock } from '../clock';
import type { DB } from '../db/schema';
import type { AppWebhookOutbox, DebtPolicy } from './app-webhook-outbox';

/** What the writers of app webhook messages see of their unit of work's outbox. */
export interface UnitOfWorkOutbox {
  /** WALLET_LOW_BALANCE_THRESHOLD of the process (see AppWebhookOutbox). */
  readonly lowBalanceThreshold: number | undefined;
  /**
   * The messages are handed off after the commit: they are written with enqueued_at = now(), so
   * the relay takes them only once that stamp is stale (the process died between commit and
   * hand-off, or the hand-off failed and released them). Otherwise NULL: the relay's next pass
   * hands them off.
   */
  readonly handsOff: boolean;
  /** The ids of the messages written so far in this unit, in the order written. */
  readonly messageIds: readonly number[];
  /** Records messages written in this unit (handed off once it commits). */
  written(messageIds: readonly number[]): void;
  /** Forgets the messages recorded after the first `count` (their rows were rolled back to a savepoint). */
  forgetAfter(count: number): void;
}

/**
 * One money transaction and what travels with it: every write of money or of app webhook messages
 * (postLedgerEntry, writeAppWebhookMessage, the take-backs, studio, top-ups, installments, the
 * inbox handlers' `apply`) takes one, so none can be called outside a transaction opened with the
 * process's outbox: forgetting it is a compile error.
 *
 * Invariant: a unit of work is opened by exactly one place, the one that opens the money
 * transaction (the inbox engine for events, the use case an app calls for the rest), right after
 * BEGIN (runInUnitOfWork, inUnitOfWork); it lives exactly as long as `trx`, and is never stored
 * beyond it. Its messages are handed off only after `trx` committed (never after a rollback).
 * Lots travel through this same seam (postLedgerEntry moves an entry's lots in its unit, see
 * ledger/lots.ts); holds will too.
 */
export interface UnitOfWork {
  /** The transaction every write of the unit joins. */
  readonly trx: Transaction<DB>;
  /** The messages this unit wrote and how they are written (threshold, hand-off). */
  readonly outbox: UnitOfWorkOutbox;
  /** The unit's "now" where code (not the database) decides the time: injected, tests control it. */
  readonly clock: Clock;
  /**
   * Users whose user and wallet rows this unit already ensured (ensureWallet, markWalletEnsured).
   * Users and wallets are never deleted, so once ensured in a transaction they exist until it
   * ends (the one savepoint, atomically, forgets what it rolls back): a second ensure costs no
   * round trip.
   */
  readonly walletsEnsured: Set<string>;
  /**
   * Users whose wallet row this unit holds locked (FOR UPDATE: lockWalletFunds,
   * lockWalletsForSpend, lockWalletsForHolds): a later spend of the user in the unit reads its
   * funds in one statement, without taking the lock again (a hot wallet's further spends in a
   * shared unit). Row locks are held until the transaction ends; the one savepoint, atomically,
   * forgets what it rolls back.
   */
  readonly walletsLocked: Set<string>;
  /** DEBT_POLICY of the process (AppWebhookOutbox.debtPolicy; `settle` when not given). */
  readonly debtPolicy: DebtPolicy;
}

/**
 * Opens a unit of work on a transaction that just began. Only a transaction runner calls it
 * (runInUnitOfWork); a test that drives BEGIN itself may too, and then hands off with
 * handOffCommitted after its COMMIT.
 */
export function openUnitOfWork(trx: Transaction<DB>, outbox: AppWebhookOutbox, clock: Clock = systemClock): UnitOfWork {
  const messageIds: number[] = [];
  return {
    trx,
    clock,
    walletsEnsured: new Set(),
    walletsLocked: new Set(),
    debtPolicy: outbox.debtPolicy ?? 'settle',
    outbox: {
      lowBalanceThreshold: outbox.lowBalanceThreshold,
      handsOff: outbox.handOff !== undefined,
      messageIds,
      written: (ids) => {
        messageIds.push(...ids);
      },
      forgetAfter: (count) => {
        messageIds.length = Math.min(messageIds.length, count);
      },
    },
  };
}

/** After COMMIT: hands the unit's messages off (waiting only when the hand-off says so). */
export async function handOffCommitted(outbox: AppWebhookOutbox, uow: UnitOfWork | undefined): Promise<void> {
  if (!outbox.handOff || !uow || uow.outbox.messageIds.length === 0) return;
  await outbox.handOff(uow.outbox.messageIds);
}

/** What opens a unit of work: the database, the process's outbox and (default the system) clock. */
export interface UnitOfWorkDeps {
  db: Kysely<DB>;
  outbox: AppWebhookOutbox;
  clock?: Clock;
}

/**
 * runInTransaction with a unit of work: the messages `work` writes follow the process outbox's
 * settings, and once the transaction has committed they are handed to the delivery queue (never
 * after a rollback, nor when COMMIT fails). The relay stays the safety net for a process that
 * dies between the commit and the hand-off.
 */
export async function runInUnitOfWork<T>(
  deps: UnitOfWorkDeps,
  work: (uow: UnitOfWork) => Promise<TransactionDecision<T>>,
): Promise<T> {
  let uow: UnitOfWork | undefined;
  let committing = false;
  const value = await runInTransaction(deps.db, async (trx) => {
    uow = openUnitOfWork(trx, deps.outbox, deps.clock);
    const decision = await work(uow);
    committing = decision.kind === 'commit';
    return decision;
  });
  // runInTransaction returned: a commit decision has committed (a failed COMMIT throws).
  // guard: app-webhook-handoff
  if (committing) await handOffCommitted(deps.outbox, uow);
  return value;
}

/** One unit of work that commits unless `work` throws (see runInUnitOfWork). */
export function inUnitOfWork<T>(deps: UnitOfWorkDeps, work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
  return runInUnitOfWork(deps, async (uow) => commitWith(await work(uow)));
}

/**
 * Runs `work` all or nothing inside the unit's transaction: under a savepoint, rolled back to it
 * when `work` throws (the error is rethrown), with the unit's record of messages, ensured
 * wallets and locked wallets put back as they were. A caller that catches the error and commits keeps nothing of
 * `work`; the transaction stays usable. For writers that make several postings in one call
 * (postLedgerEntries), where a failure part way would otherwise leave the earlier ones behind.
 */
export async function atomically<T>(uow: UnitOfWork, work: () => Promise<T>): Promise<T> {
  const messages = uow.outbox.messageIds.length;
  const ensured = new Set(uow.walletsEnsured);
  const locked = new Set(uow.walletsLocked);
  await sql`SAVEPOINT tally_atomically`.execute(uow.trx);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await sql`ROLLBACK TO SAVEPOINT tally_atomically`.execute(uow.trx);
    uow.outbox.forgetAfter(messages);
    for (const userId of uow.walletsEnsured) if (!ensured.has(userId)) uow.walletsEnsured.delete(userId);
    for (const userId of uow.walletsLocked) if (!locked.has(userId)) uow.walletsLocked.delete(userId);
    throw error;
  }
  await sql`RELEASE SAVEPOINT tally_atomically`.execute(uow.trx);
  return result;
}
