import { useDatabase } from '@tally/platform/testing';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema';
import { type InboxHandler, processed } from '../inbox/inbox-handler';
import { lockUsersAndReadInboxEvents } from '../inbox/inbox-transitions';
import { processInboxEvents } from '../inbox/process-inbox-events';
import { type Signal, signal } from '../testing/signal';
import { testOutbox } from '../testing/test-outbox';
import { createTestDatabase } from '../testing/test-services';
import { lockUser, lockUsers, UserLockOrderError } from './lock-user';

/**
 * Two transactions that lock the same two users through the real code paths. Postgres would
 * break a cycle by failing one of them with 40P01 (deadlock_timeout, made short here); each step
 * is ordered by a gate or by seeing the other transaction wait for its lock in pg_locks.
 */
describe('user locks are taken in one order on every path, so two transactions never deadlock on them', () => {
  const database = useDatabase(createTestDatabase);

  /** A pair of ids `first` < `second` as strings whose lock keys are the other way round. */
  async function idsWithKeysReversed(prefix: string): Promise<{ first: string; second: string }> {
    const { rows } = await sql<{ first: string; second: string }>`
      SELECT ${`${prefix}-a-`} || i AS first, ${`${prefix}-b-`} || i AS second FROM generate_series(1, 1000) AS i
       WHERE hashtext(${`${prefix}-b-`} || i) < hashtext(${`${prefix}-a-`} || i) LIMIT 1`.execute(database.db);
    const pair = rows[0];
    if (!pair) throw new Error('no pair of ids with reversed lock keys');
    return pair;
  }

  async function advisoryWaiters(): Promise<number> {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_locks
       WHERE locktype = 'advisory' AND NOT granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(database.db);
    return rows[0]?.waiting ?? 0;
  }

  /**
   * Resolves once `count` transactions wait for an advisory lock (polls Postgres; the order comes
   * from there). When they never do, opens `gate` first, so no transaction outlives the test.
   */
  async function untilWaiting(count: number, gate: { resolve: () => void }): Promise<void> {
    for (let polls = 0; polls < 500; polls += 1) {
      if ((await advisoryWaiters()) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    gate.resolve();
    throw new Error(`never saw ${count} transactions waiting for an advisory lock`);
  }

  /** One fresh inbox row per user id. */
  const insertEvents = (userIds: string[]) =>
    database.db
      .insertInto('inbox_events')
      .values(
        userIds.map((userId) => ({
          provider: 'stripe' as const,
          provider_event_id: `evt_lock_order_${userId}`,
          type: 'payment_intent.succeeded',
          livemode: false,
          environment: 'sandbox' as const,
          user_id: userId,
          provider_customer_id: null,
          provider_subscription_id: null,
          provider_payment_intent_id: null,
          provider_invoice_id: null,
          raw_body: '{}',
        })),
      )
      .returning('id')
      .execute();

  /** A transaction that would notice a cycle quickly, and never waits forever. */
  function inTransaction<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return database.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL deadlock_timeout = '50ms'`.execute(trx);
      await sql`SET LOCAL lock_timeout = '10s'`.execute(trx);
      return work(trx);
    });
  }
  /**
   * A transaction that locks `first` (`held` resolves then), waits at `gate`, then locks `second`
   * (an order another transaction may contradict); `done` is its outcome.
   */
  function lockOneThenAtGate(first: string, second: string, gate: Signal) {
    const held = signal();
    const done = inTransaction(async (trx) => {
      await lockUser(trx, first);
      held.resolve();
      await gate.promise;
      await lockUsers(trx, [second]);
      return 'locked both';
    });
    return { held: held.promise, done };
  }

  it('a coalesced batch of events for users A and B and lockUsers([B, A]) both commit', async () => {
    const { first, second } = await idsWithKeysReversed('batch');
    const events = await insertEvents([first, second]);

    // The second user's lock is held, so both transactions below queue for it: the batch first.
    const holderHolds = signal();
    const release = signal();
    const holder = inTransaction(async (trx) => {
      await lockUser(trx, second);
      holderHolds.resolve();
      await release.promise;
    });
    await holderHolds.promise;
    const batch = inTransaction((trx) =>
      lockUsersAndReadInboxEvents(
        trx,
        events.map((event) => event.id),
        { lockRows: false },
      ),
    );
    await untilWaiting(1, release);
    const writer = inTransaction(async (trx) => {
      // Named in the other order than the batch's rows: the order is the locks', not the caller's.
      await lockUsers(trx, [second, first]);
      return 'locked both';
    });
    await untilWaiting(2, release);
    release.resolve();

    const outcomes = await Promise.allSettled([batch, writer, holder]);
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? 'committed' : String(outcome.reason)))).toEqual([
      'committed',
      'committed',
      'committed',
    ]);
    const rows = outcomes[0].status === 'fulfilled' ? outcomes[0].value : [];
    expect(rows.map((row) => row.user_id)).toEqual([first, second]);
  });

  it('a transaction holding a user lock is told to retry (UserLockOrderError) rather than wait for a lower one', async () => {
    const { first: high, second: low } = await idsWithKeysReversed('later');
    const goOn = signal();
    // An event's own user first, then (a handler) its linked user, whose key is lower.
    const { held, done: event } = lockOneThenAtGate(high, low, goOn);
    await held;
    // The other way round: the lower user first, then the higher one (waits for the event).
    const other = inTransaction(async (trx) => {
      await lockUser(trx, low);
      await lockUsers(trx, [high]);
      return 'locked both';
    });
    await untilWaiting(1, goOn);
    goOn.resolve();

    const [eventOutcome, otherOutcome] = await Promise.allSettled([event, other]);
    expect({
      event: eventOutcome.status === 'rejected' ? eventOutcome.reason : 'committed',
      other: otherOutcome.status === 'fulfilled' ? otherOutcome.value : String(otherOutcome.reason),
    }).toEqual({ event: expect.any(UserLockOrderError), other: 'locked both' });
    expect(eventOutcome.status === 'rejected' && (eventOutcome.reason as UserLockOrderError).retryable).toBe(true);
  });

  it("an event whose handler locks a linked user below the event's own runs again with both locked in order, and is applied once", async () => {
    const { first: eventUser, second: linkedUser } = await idsWithKeysReversed('engine');
    const [event] = await insertEvents([eventUser]);
    const applies: string[] = [];
    // As token-pack refunds and subscription events do: the linked (canonical) user's lock, after the event's.
    const handler: InboxHandler<undefined> = {
      prepare: () => ({ kind: 'ready', prepared: undefined, touchesLedger: true }),
      async apply(uow) {
        await lockUsers(uow.trx, [linkedUser]);
        applies.push('applied');
        return processed('credited', `locked ${linkedUser}`);
      },
    };
    // Another writer holds the linked user and then wants the event's user.
    const goOn = signal();
    const { held, done: other } = lockOneThenAtGate(linkedUser, eventUser, goOn);
    await held;
    const processing = processInboxEvents(
      {
        db: database.db,
        handlers: { stripe: handler, revenuecat: handler, apple: handler, google_play: handler },
        outbox: testOutbox,
        maxAttempts: 5,
        backoff: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
        retryLater: { baseDelayMs: 60_000, maxDelayMs: 60_000, maxWaitMs: 3_600_000 },
      },
      [Number(event?.id)],
      { runsStarted: 1, stalls: 0 },
    ).then(([result]) => result);
    // The event waits for the linked user's lock (in order), holding no other user lock.
    await untilWaiting(1, goOn);
    goOn.resolve();

    const [otherOutcome, eventOutcome] = await Promise.allSettled([other, processing]);
    expect(otherOutcome).toEqual({ status: 'fulfilled', value: 'locked both' });
    expect(eventOutcome).toMatchObject({ status: 'fulfilled', value: { kind: 'processed', path: 'claimed' } });
    expect(
      await database.db
        .selectFrom('inbox_events')
        .select(['status', 'attempts', 'deferrals', 'outcome_code', 'outcome_detail', 'last_error'])
        .where('id', '=', Number(event?.id))
        .executeTakeFirst(),
    ).toEqual({
      status: 'processed',
      attempts: 1,
      deferrals: 0,
      outcome_code: 'credited',
      outcome_detail: `locked ${linkedUser}`,
      last_error: null,
    });
    // Two passes were refused the lock before it was taken in order; only the third committed.
    expect(applies).toEqual(['applied']);
  });
});
