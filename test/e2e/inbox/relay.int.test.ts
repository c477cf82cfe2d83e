import { findWallet } from '@tally/billing-core';
import { revenueCatTokenPurchase } from '../../support/events';
import { DisposableRedis } from '../../support/redis-server';
import { eventually, TestStack } from '../../support/stack';

const fastRelay = { intervalMs: 100, staleAfterMs: 200, processingStaleAfterMs: 1_000, batchSize: 2 };

describe('the relay: Postgres is the system of record, Redis only delivers', () => {
  it('answers 200 while Redis is down and processes every event once Redis is back', async () => {
    const redis = await DisposableRedis.start();
    const stack = await TestStack.start({ redisUrl: redis.url });
    try {
      await redis.stopServer();
      // Ingest stays in the load balancer: it can still store events, and says Redis is down.
      const ready = await fetch(`http://127.0.0.1:${stack.ingest.port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ready',
        checks: { postgres: 'ok', redis: expect.not.stringMatching(/^ok$/) },
      });
      const ids = Array.from({ length: 5 }, (_, i) => `rc-outage-${i}`);
      for (const id of ids) {
        const response = await stack.postRevenueCat(revenueCatTokenPurchase({ id, userId: 'outage-user' }));
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ status: 'accepted', eventId: id });
      }
      // A redelivery during the outage is still a duplicate, decided by Postgres alone.
      const again = await stack.postRevenueCat(revenueCatTokenPurchase({ id: ids[0], userId: 'outage-user' }));
      expect(await again.json()).toEqual({ status: 'duplicate', eventId: ids[0] });

      // The answer does not wait for the hand-off to the queue: its failure (Redis down) releases
      // the rows to the relay (enqueued_at cleared) just after the 200s.
      const stranded = await eventually('every row released to the relay', async () => {
        const rows = await stack.db.selectFrom('inbox_events').select(['status', 'enqueued_at']).execute();
        return rows.every((row) => row.enqueued_at === null) ? rows : undefined;
      });
      expect(stranded).toHaveLength(5);
      expect(stranded.every((row) => row.status === 'received' && row.enqueued_at === null)).toBe(true);

      // Redis comes back empty (it keeps nothing on disk): only the relay knows about these events.
      await redis.startServer();
      stack.startWorker({ relay: fastRelay });
      await eventually(
        'every event to be processed',
        async () => {
          const rows = await stack.db.selectFrom('inbox_events').select('status').execute();
          return rows.every((row) => row.status === 'processed');
        },
        30_000,
      );
      expect(await findWallet(stack.db, 'outage-user')).toEqual({ userId: 'outage-user', balance: 500 });
      const ledger = await stack.db.selectFrom('ledger_entries').select('reference').orderBy('reference').execute();
      expect(ledger.map((entry) => entry.reference)).toEqual(ids.map((id) => `revenuecat:event:${id}`).sort());
    } finally {
      await stack.stop();
      await redis.stopServer();
    }
  });

  it('recovers events whose jobs a Redis restart lost after they were enqueued', async () => {
    const redis = await DisposableRedis.start();
    const stack = await TestStack.start({ redisUrl: redis.url });
    try {
      // No worker yet: the jobs sit in Redis, then Redis restarts without persistence.
      for (const id of ['rc-lost-1', 'rc-lost-2', 'rc-lost-3']) {
        expect((await stack.postRevenueCat(revenueCatTokenPurchase({ id, userId: 'lost-user' }))).status).toBe(200);
      }
      expect(await stack.queue.getWaitingCount()).toBe(3);
      await redis.stopServer();
      await redis.startServer();
      await eventually('the producer to reconnect', async () => (await stack.queue.getWaitingCount()) === 0);

      stack.startWorker({ relay: fastRelay });
      await eventually(
        'every event to be processed',
        async () => {
          const rows = await stack.db.selectFrom('inbox_events').select('status').execute();
          return rows.length === 3 && rows.every((row) => row.status === 'processed');
        },
        30_000,
      );
      expect(await findWallet(stack.db, 'lost-user')).toEqual({ userId: 'lost-user', balance: 300 });
    } finally {
      await stack.stop();
      await redis.stopServer();
    }
  });
});
