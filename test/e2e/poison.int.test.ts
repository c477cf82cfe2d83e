import { spawn } from 'node:child_process';
import path from 'node:path';
import { findWallet } from '@tally/billing-core';
import { revenueCatTokenPurchase } from '../support/events';
import { eventually, TestStack } from '../support/stack';

const poisonWorker = path.join(__dirname, '../support/poison-worker.mjs');

describe('poison events', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(() => stack.stop());

  /**
   * Runs the poison worker under a supervisor that restarts it whenever it dies (as Kubernetes
   * would) until the poison event parks; returns how many times it was killed.
   */
  async function runPoison(poisonIn: 'prepare' | 'apply', eventId: string, userId: string, maxAttempts: number) {
    let deaths = 0;
    let stopped = false;
    let current: ReturnType<typeof spawn> | undefined;
    const startWorker = () => {
      const child = spawn(process.execPath, [poisonWorker], {
        cwd: path.join(__dirname, '..'),
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: stack.database.url,
          REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
          QUEUE_PREFIX: stack.prefix,
          INBOX_MAX_ATTEMPTS: String(maxAttempts),
          POISON_IN: poisonIn,
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
    try {
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: eventId, userId }));
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
      expect(parked).toMatchObject({
        attempts: maxAttempts,
        outcome_code: 'attempts_exhausted',
        last_error: expect.stringContaining('the worker stopped during the last attempt'),
      });
      const deathsWhenParked = deaths;

      // The fleet is healthy again: the next event is processed, and the poison one stays parked.
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: `healthy-${eventId}`, userId }));
      await eventually(
        'the healthy event to be credited',
        async () => (await findWallet(stack.db, userId)).balance === 100,
        20_000,
      );
      expect(deaths).toBe(deathsWhenParked);
      return deaths;
    } finally {
      stopped = true;
      current?.kill('SIGKILL');
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
});
