import {
  type DB,
  type InboxEventDraft,
  inboxJobId,
  inboxRelaySource,
  recordInboxEvents,
  toRevenueCatInboxDraftFromBody,
  toStripeInboxDraftFromBody,
} from '@tally/billing-core';
import { signal } from '@tally/billing-core/testing';
import { createDb, createLogger, enqueueJobs } from '@tally/platform';
import { sql } from 'kysely';
import { createInboxBatcher } from '../../../apps/ingest/src/inbox-batcher';
import { revenueCatTokenPurchase, stripeTokenPackPayment } from '../../support/events';
import { DisposableRedis } from '../../support/redis-server';
import { defaultIngestBatching, eventually, readJson, signStripe, TestStack } from '../../support/stack';
import { suiteStack } from '../../support/suite';

const silent = createLogger({ name: 'test', level: 'silent' });
const stripeDraft = (eventId: string) => toStripeInboxDraftFromBody(stripeTokenPackPayment({ eventId }));

describe('ingest batching: one insert and one bulk enqueue for concurrent webhooks, each answer after its own commit', () => {
  const stack = suiteStack();

  /** A batcher on the stack's database and queue that records every bulk enqueue it makes. */
  function batcher(maxConcurrentBatches = 1) {
    const enqueued: number[][] = [];
    const instance = createInboxBatcher({
      ...defaultIngestBatching,
      db: stack.db,
      enqueueMany: async (ids) => {
        enqueued.push([...ids]);
        await enqueueJobs(
          stack.queue,
          ids.map((id) => inboxRelaySource.toPayload(id)),
        );
      },
      logger: silent,
      maxConcurrentBatches,
    });
    return { instance, enqueued };
  }

  const rowsOf = (ids: string[]) =>
    stack.db
      .selectFrom('inbox_events')
      .select(['id', 'provider_event_id', 'raw_body', 'enqueued_at'])
      .where('provider_event_id', 'in', ids)
      .orderBy('id')
      .execute();

  it('a batch where one row already exists answers duplicate for it and accepted for the others, enqueued in one bulk', async () => {
    const { instance, enqueued } = batcher();
    expect(await instance.accept(stripeDraft('evt_batch_old'))).toMatchObject({ kind: 'accepted' });
    await instance.drain();
    enqueued.length = 0;

    // Submitted in one turn: one batch.
    const results = await Promise.all(
      ['evt_batch_new_1', 'evt_batch_old', 'evt_batch_new_2'].map((id) => instance.accept(stripeDraft(id))),
    );
    const rows = await rowsOf(['evt_batch_old', 'evt_batch_new_1', 'evt_batch_new_2']);
    const idOf = (eventId: string) => rows.find((row) => row.provider_event_id === eventId)?.id;
    expect(results).toEqual([
      { kind: 'accepted', inboxEventId: idOf('evt_batch_new_1') },
      { kind: 'duplicate', inboxEventId: idOf('evt_batch_old') },
      { kind: 'accepted', inboxEventId: idOf('evt_batch_new_2') },
    ]);
    expect(rows).toHaveLength(3);
    await instance.drain();
    expect(enqueued).toEqual([[idOf('evt_batch_new_1'), idOf('evt_batch_new_2')]]);
    for (const eventId of ['evt_batch_new_1', 'evt_batch_new_2']) {
      expect(await stack.queue.getJob(inboxJobId(idOf(eventId) as number))).toBeDefined();
    }
  });

  /** An enqueueMany that waits for release() before handing the ids to the stack's queue. */
  function gatedQueue() {
    const handedOff: number[][] = [];
    let open: () => void = () => undefined;
    let gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    return {
      handedOff,
      enqueueMany: async (ids: number[]) => {
        await gate;
        await enqueueJobs(
          stack.queue,
          ids.map((id) => inboxRelaySource.toPayload(id)),
        );
        handedOff.push([...ids]);
      },
      release() {
        open();
        gate = Promise.resolve();
      },
    };
  }

  it('the answer follows the commit without waiting for the bulk enqueue; drain() waits for it', async () => {
    const slowQueue = gatedQueue();
    const instance = createInboxBatcher({
      ...defaultIngestBatching,
      db: stack.db,
      enqueueMany: slowQueue.enqueueMany,
      logger: silent,
    });
    const result = await instance.accept(stripeDraft('evt_handoff_behind'));
    expect(result.kind).toBe('accepted');
    const id = result.kind === 'accepted' ? result.inboxEventId : -1;
    // Answered: the row is committed (read from another connection) and stamped for the relay,
    // and the queue has not heard of it yet.
    const [row] = await rowsOf(['evt_handoff_behind']);
    expect(row?.id).toBe(id);
    expect(row?.enqueued_at).not.toBeNull();
    expect(await stack.queue.getJob(inboxJobId(id))).toBeUndefined();

    let drained = false;
    const draining = instance.drain().then(() => {
      drained = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(drained).toBe(false);
    slowQueue.release();
    await draining;
    expect(slowQueue.handedOff).toEqual([[id]]);
    expect(await stack.queue.getJob(inboxJobId(id))).toBeDefined();
  });

  it('past maxPendingHandOffs a batch is answered only after its own hand-off (a slow queue cannot pile up)', async () => {
    const slowQueue = gatedQueue();
    const instance = createInboxBatcher({
      ...defaultIngestBatching,
      db: stack.db,
      enqueueMany: slowQueue.enqueueMany,
      logger: silent,
      maxConcurrentBatches: 1,
      maxPendingHandOffs: 1,
    });
    expect((await instance.accept(stripeDraft('evt_backpressure_1'))).kind).toBe('accepted');
    let secondAnswered = false;
    const second = instance.accept(stripeDraft('evt_backpressure_2')).then((result) => {
      secondAnswered = true;
      return result;
    });
    await eventually('the second row to be committed', async () => (await rowsOf(['evt_backpressure_2'])).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(secondAnswered).toBe(false);
    slowQueue.release();
    expect((await second).kind).toBe('accepted');
    await instance.drain();
    expect(slowQueue.handedOff).toHaveLength(2);
  });

  it('a process that dies after answering and before the hand-off loses nothing: the relay delivers the row', async () => {
    // The hand-off never happens (as if ingest were killed right after the 200).
    const instance = createInboxBatcher({
      ...defaultIngestBatching,
      db: stack.db,
      enqueueMany: () => new Promise(() => undefined),
      logger: silent,
    });
    const result = await instance.accept(stripeDraft('evt_died_before_handoff'));
    expect(result.kind).toBe('accepted');
    const id = result.kind === 'accepted' ? result.inboxEventId : -1;
    expect(await stack.queue.getJob(inboxJobId(id))).toBeUndefined();
    stack.startWorker({ relay: { intervalMs: 100, staleAfterMs: 300, processingStaleAfterMs: 5_000, batchSize: 10 } });
    try {
      const row = await stack.finishedInboxRow('stripe', 'evt_died_before_handoff');
      expect(row).toMatchObject({ id, status: 'processed', attempts: 1 });
    } finally {
      await stack.stopWorkers();
    }
  });

  it('the same event twice in one batch: exactly one accepted, one row (the first body), the other a duplicate of it', async () => {
    const { instance, enqueued } = batcher();
    const bodyA = stripeTokenPackPayment({ eventId: 'evt_batch_twice', paymentIntentId: 'pi_first' });
    const bodyB = stripeTokenPackPayment({ eventId: 'evt_batch_twice', paymentIntentId: 'pi_second' });
    const results = await Promise.all([
      instance.accept(toStripeInboxDraftFromBody(bodyA)),
      instance.accept(toStripeInboxDraftFromBody(bodyB)),
      instance.accept(stripeDraft('evt_batch_twice_other')),
    ]);
    const rows = await rowsOf(['evt_batch_twice']);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.raw_body).toBe(bodyA);
    expect(results[0]).toEqual({ kind: 'accepted', inboxEventId: rows[0]?.id });
    expect(results[1]).toEqual({ kind: 'duplicate', inboxEventId: rows[0]?.id });
    expect(results[2]).toMatchObject({ kind: 'accepted' });
    await instance.drain();
    expect(enqueued).toHaveLength(1);
    expect(enqueued[0]).toHaveLength(2);
  });

  it('concurrent deliveries of one event over HTTP: exactly one accepted, the rest duplicates, one row', async () => {
    const body = stripeTokenPackPayment({ eventId: 'evt_http_burst' });
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => stack.postStripe(body, signStripe(body)).then(readJson)),
    );
    expect(responses.filter((answer) => answer.status === 'accepted')).toHaveLength(1);
    expect(responses.filter((answer) => answer.status === 'duplicate')).toHaveLength(11);
    expect(await rowsOf(['evt_http_burst'])).toHaveLength(1);
  });

  it('a row-level failure fails only its own draft: the others of the batch are recorded', async () => {
    const good1 = stripeDraft('evt_rowfail_1');
    const good2 = toRevenueCatInboxDraftFromBody(revenueCatTokenPurchase({ id: 'rc-rowfail-2' }));
    // Drafts from the parsers cannot break a constraint; one built by hand can (id over 255).
    const bad: InboxEventDraft = { ...stripeDraft('evt_rowfail_bad'), providerEventId: 'x'.repeat(300) };
    const results = await recordInboxEvents(stack.db, [good1, bad, good2]);
    expect(results.map((result) => result.kind)).toEqual(['recorded', 'failed', 'recorded']);
    expect(await rowsOf(['evt_rowfail_1', 'rc-rowfail-2'])).toHaveLength(2);
  });

  /**
   * Runs `during` while another session holds uncommitted inserts of `keys`: an insert of those
   * keys waits on the unique index, mid-statement, until that session rolls back (afterwards).
   */
  async function whileKeysAreHeld(keys: string[], during: () => Promise<void>): Promise<void> {
    const blocker = createDb<DB>({ connectionString: stack.database.url, maxConnections: 1 });
    const ready = signal();
    const released = signal();
    const transaction = blocker.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .insertInto('inbox_events')
          .values(keys.map((key) => ({ provider: 'stripe', provider_event_id: key, type: 't', raw_body: '{}' })))
          .execute();
        ready.resolve();
        await released.promise;
        throw new Error('roll back the blocker');
      })
      .catch(() => undefined);
    await ready.promise;
    try {
      await during();
    } finally {
      released.resolve();
      await transaction;
      await blocker.close();
    }
  }

  /** Kills every backend of this database whose insert into the inbox waits on a lock; how many. */
  async function killWaitingInserts(): Promise<number> {
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'insert into%inbox_events%'`.execute(
      stack.db,
    );
    for (const row of rows) await sql`SELECT pg_terminate_backend(${row.pid})`.execute(stack.db);
    return rows.length;
  }

  it('a batch takes its key locks in one order, whatever the arrival order: it never deadlocks with another insert of the same keys', async () => {
    // Another session (a concurrent batch, another replica) holds an uncommitted row of key "a"
    // and then inserts key "z". A batch that arrived as [z, a] and inserted in arrival order
    // would hold z while waiting for a: a deadlock, which Postgres breaks only after
    // deadlock_timeout by failing one of the two. In key order the batch holds nothing while it
    // waits for a, so the other session's insert of z goes through at once (lock_timeout 200 ms, under the 1 s deadlock_timeout).
    const keys = { a: 'evt_lockorder_a', z: 'evt_lockorder_z' };
    const other = createDb<DB>({ connectionString: stack.database.url, maxConnections: 1 });
    const aHeld = signal();
    const zWanted = signal();
    let zOutcome = 'not tried';
    const otherSession = other.db
      .transaction()
      .execute(async (trx) => {
        const row = (key: string) => ({
          provider: 'stripe' as const,
          provider_event_id: key,
          type: 't',
          raw_body: '{}',
        });
        await trx.insertInto('inbox_events').values(row(keys.a)).execute();
        aHeld.resolve();
        await zWanted.promise;
        await sql`SET LOCAL lock_timeout = '200ms'`.execute(trx);
        try {
          await trx.insertInto('inbox_events').values(row(keys.z)).execute();
          zOutcome = 'inserted';
        } catch (error) {
          zOutcome = `failed: ${(error as { code?: string }).code}`;
        }
        throw new Error('roll back the other session');
      })
      .catch(() => undefined);
    try {
      await aHeld.promise;
      const batch = recordInboxEvents(stack.db, [stripeDraft(keys.z), stripeDraft(keys.a)]);
      await eventually('the batch insert to wait on the held key', async () => {
        const { rows } = await sql<{ pid: number }>`
          SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'insert into%inbox_events%'`.execute(
          stack.db,
        );
        return rows.length > 0;
      });
      zWanted.resolve();
      await otherSession;
      expect(zOutcome).toBe('inserted');
      expect((await batch).map((result) => result.kind)).toEqual(['recorded', 'recorded']);
      expect(await rowsOf([keys.a, keys.z])).toHaveLength(2);
    } finally {
      zWanted.resolve();
      await otherSession;
      await other.close();
    }
  });

  it('a batch cut off by a killed database connection answers no draft accepted; the retries are accepted', async () => {
    const { instance } = batcher();
    const ids = ['evt_cut_1', 'evt_cut_2', 'evt_cut_3'];
    await whileKeysAreHeld(['evt_cut_2'], async () => {
      const pending = Promise.all(ids.map((id) => instance.accept(stripeDraft(id))));
      await eventually(
        'the batch insert to wait on the lock, then be killed',
        async () => (await killWaitingInserts()) > 0,
      );
      expect(await pending).toEqual([{ kind: 'unavailable' }, { kind: 'unavailable' }, { kind: 'unavailable' }]);
    });
    // The killed connection's socket closes just after its error answer; let the pool drop it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The statement died as a whole: nothing of the batch was committed.
    expect(await rowsOf(ids)).toHaveLength(0);

    // The provider retries: every event is accepted now, once.
    const retried = await Promise.all(ids.map((id) => instance.accept(stripeDraft(id))));
    expect(retried.map((result) => result.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(await rowsOf(ids)).toHaveLength(3);
  });

  it('over HTTP, requests whose batch insert is killed are answered 503, never 200, and the retries 200 accepted', async () => {
    const ids = ['evt_cut_http_1', 'evt_cut_http_2'];
    const bodies = ids.map((eventId) => stripeTokenPackPayment({ eventId }));
    await whileKeysAreHeld(ids, async () => {
      let answered = false;
      const responses = Promise.all(bodies.map((body) => stack.postStripe(body, signStripe(body)))).finally(() => {
        answered = true;
      });
      await eventually('every waiting insert to be killed and both requests answered', async () => {
        await killWaitingInserts();
        return answered;
      });
      expect((await responses).map((response) => response.status)).toEqual([503, 503]);
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rowsOf(ids)).toHaveLength(0);
    const retried = await Promise.all(bodies.map((body) => stack.postStripe(body, signStripe(body)).then(readJson)));
    expect(retried.map((answer) => answer.status)).toEqual(['accepted', 'accepted']);
  });
});

describe('ingest batching while Redis is down', () => {
  it('a batch is answered accepted and its rows are left for the relay (enqueued_at NULL)', async () => {
    const redis = await DisposableRedis.start();
    const stack = await TestStack.start({ redisUrl: redis.url });
    try {
      await redis.stopServer();
      const bodies = Array.from({ length: 6 }, (_, i) => stripeTokenPackPayment({ eventId: `evt_redis_down_${i}` }));
      const answers = await Promise.all(bodies.map((body) => stack.postStripe(body, signStripe(body)).then(readJson)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill('accepted'));
      // The failed hand-off runs behind the answers; it releases every row to the relay.
      await eventually('every row released to the relay', async () => {
        const rows = await stack.db.selectFrom('inbox_events').select(['status', 'enqueued_at']).execute();
        return rows.length === 6 && rows.every((row) => row.status === 'received' && row.enqueued_at === null);
      });

      // And the relay delivers them once Redis is back.
      await redis.startServer();
      stack.startWorker({
        relay: { intervalMs: 100, staleAfterMs: 200, processingStaleAfterMs: 1_000, batchSize: 10 },
      });
      await eventually(
        'every event to be processed',
        async () => {
          const done = await stack.db.selectFrom('inbox_events').select('status').execute();
          return done.every((row) => row.status === 'processed');
        },
        30_000,
      );
    } finally {
      await stack.stop();
      await redis.stopServer();
    }
  });
});
