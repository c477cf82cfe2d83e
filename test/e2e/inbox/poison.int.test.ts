import { spawn } from 'node:child_process';
import path from 'node:path';
import { findWallet } from '@tally/billing-core';
import { revenueCatTokenPurchase } from '../../support/events';
import { eventually } from '../../support/stack';
import { suiteStack } from '../../support/suite';

const poisonWorker = path.join(__dirname, '../../support/poison-worker.mjs');

describe('poison events', () => {
  const stack = suiteStack();

  /**
   * Starts the poison worker under a supervisor that restarts it whenever it dies (as Kubernetes
   * would); `deaths()` counts its SIGKILLs.
   */
  function supervise(poisonIn: 'prepare' | 'apply', maxAttempts: number, env: Record<string, string> = {}) {
    let deaths = 0;
    let stopped = false;
    let current: ReturnType<typeof spawn> | undefined;
    const startWorker = () => {
      const child = spawn(process.execPath, [poisonWorker], {
        cwd: path.join(__dirname, '../..'),
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: stack.database.url,
          REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
          QUEUE_PREFIX: stack.prefix,
          INBOX_MAX_ATTEMPTS: String(maxAttempts),
          POISON_IN: poisonIn,
          ...env,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      current = child;
      child.on('exit', (_code, signal) => {
        if (signal === 'SIGKILL') deaths += 1;
        if (!stopped) startWorker();
      });
    };
    startWorker();
    return {
      deaths: () => deaths,
      stop: () => {
        stopped = true;
        current?.kill('SIGKILL');
      },
    };
  }

  async function parkedRowOf(eventId: string) {
    const parked = await eventually(
      'the poison event to park',
      async () => {
        const row = await stack.db
          .selectFrom('inbox_events')
          .selectAll()
          .where('provider_event_id', '=', eventId)
          .executeTakeFirstOrThrow();
        return row.status === 'failed' ? row : undefined;
      },
      90_000,
    );
    return parked;
  }

  /** Runs the poison worker until the poison event parks; returns how many times it was killed. */
  async function runPoison(poisonIn: 'prepare' | 'apply', eventId: string, userId: string, maxAttempts: number) {
    const worker = supervise(poisonIn, maxAttempts);
    try {
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: eventId, userId }));
      const parked = await parkedRowOf(eventId);
      expect(parked).toMatchObject({
        attempts: maxAttempts,
        outcome_code: 'attempts_exhausted',
        last_error: expect.stringContaining('the worker stopped during the last attempt'),
      });
      const deathsWhenParked = worker.deaths();

      // The fleet is healthy again: the next event is processed, and the poison one stays parked.
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: `healthy-${eventId}`, userId }));
      await eventually(
        'the healthy event to be credited',
        async () => (await findWallet(stack.db, userId)).balance === 100,
        20_000,
      );
      expect(worker.deaths()).toBe(deathsWhenParked);
      return worker.deaths();
    } finally {
      worker.stop();
    }
  }

  it('parks an event whose provider-read step kills the worker process after the attempt cap, and keeps serving others', async () => {
    expect(await runPoison('prepare', 'poison-1', 'poison-user', 3)).toBe(3);
  }, 150_000);

  it('parks an event that kills the worker inside its one-transaction first attempt: that death counts no attempt, every later run claims first', async () => {
    // First run: one transaction, rolled back by the death, no attempt counted. The job then
    // re-runs as a stalled job, which claims: 3 counted deaths park it. So 4 deaths in all.
    expect(await runPoison('apply', 'poison-tx-1', 'poison-tx-user', 3)).toBe(4);
  }, 150_000);

  it('parks an event that kills the worker inside a coalesced batch; every neighbour is credited once, none parks with it', async () => {
    // Queued before any worker runs, the poison event last: the worker's first job runs alone
    // and the jobs fetched meanwhile share the next transaction (INBOX_BATCH_TRANSACTIONS=1),
    // the poison event with them. Its death rolls the batch back, so it counts no attempt; the
    // jobs re-run as stalled jobs, which claim: the poison event parks after 3 counted deaths.
    // Each neighbour's apply takes 1 s and the poison event dies 0.3 s into its own, so a
    // neighbour running beside it at a death has always claimed its attempt by then. The stalled
    // lane runs the re-runs one at a time, so none is beside it: without the lane every neighbour
    // spends its 3 attempts on the poison event's deaths and parks with it.
    const users = Array.from({ length: 6 }, (_, i) => `poison-batch-user-${i}`);
    for (const [i, userId] of users.entries()) {
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: `healthy-batch-${i}`, userId }));
    }
    await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'poison-batch-1', userId: 'poison-batch-user' }));
    const worker = supervise('apply', 3, {
      INBOX_BATCH_TRANSACTIONS: '1',
      POISON_CONCURRENCY: '8',
      POISON_NEIGHBOUR_APPLY_MS: '1000',
      POISON_KILL_AFTER_MS: '300',
    });
    try {
      expect(await parkedRowOf('poison-batch-1')).toMatchObject({ attempts: 3, outcome_code: 'attempts_exhausted' });
      // One death in the batch (no attempt counted), then three counted ones.
      expect(worker.deaths()).toBe(4);
      const rows = await eventually(
        'every neighbour to finish',
        async () => {
          const found = await stack.db
            .selectFrom('inbox_events')
            .select(['user_id', 'provider_event_id', 'status', 'outcome_code', 'attempts'])
            .where('user_id', 'in', users)
            .orderBy('user_id')
            .execute();
          return found.length === users.length &&
            found.every((row) => row.status === 'processed' || row.status === 'failed')
            ? found
            : undefined;
        },
        60_000,
      );
      // Every neighbour processed, none parked; its one credit under its own reference.
      expect(rows.map((row) => [row.user_id, row.status])).toEqual(users.map((userId) => [userId, 'processed']));
      for (const [i, userId] of users.entries()) {
        const credits = await stack.db
          .selectFrom('ledger_entries')
          .select(['reference', 'amount'])
          .where('user_id', '=', userId)
          .execute();
        expect(credits).toEqual([{ reference: `revenuecat:event:healthy-batch-${i}`, amount: 100 }]);
      }
    } finally {
      worker.stop();
    }
  }, 150_000);
});
