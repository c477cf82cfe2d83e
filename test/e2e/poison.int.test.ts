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

  it('parks an event whose processing kills the worker process after the attempt cap, and keeps serving others', async () => {
    const maxAttempts = 3;
    let deaths = 0;
    let stopped = false;
    let current: ReturnType<typeof spawn> | undefined;
    // A supervisor like Kubernetes: restart the worker whenever it dies.
    const startWorker = () => {
      const child = spawn(process.execPath, [poisonWorker], {
        cwd: path.join(__dirname, '..'),
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: stack.database.url,
          REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
          QUEUE_PREFIX: stack.prefix,
          INBOX_MAX_ATTEMPTS: String(maxAttempts),
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
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'poison-1', userId: 'poison-user' }));
      const parked = await eventually(
        'the poison event to park',
        async () => {
          const row = await stack.db
            .selectFrom('inbox_events')
            .selectAll()
            .where('provider_event_id', '=', 'poison-1')
            .executeTakeFirstOrThrow();
          return row.status === 'failed' ? row : undefined;
        },
        45_000,
      );
      expect(parked).toMatchObject({
        attempts: maxAttempts,
        outcome_code: 'attempts_exhausted',
        last_error: expect.stringContaining('the worker stopped during the last attempt'),
      });
      expect(deaths).toBe(maxAttempts);

      // The fleet is healthy again: the next event is processed, and the poison one stays parked.
      await stack.postRevenueCat(revenueCatTokenPurchase({ id: 'healthy-1', userId: 'poison-user' }));
      await eventually(
        'the healthy event to be credited',
        async () => (await findWallet(stack.db, 'poison-user')).balance === 100,
        20_000,
      );
      expect(deaths).toBe(maxAttempts);
    } finally {
      stopped = true;
      current?.kill('SIGKILL');
    }
  }, 90_000);
});
