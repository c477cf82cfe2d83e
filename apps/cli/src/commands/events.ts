import {
  createDb,
  type InboxStatus,
  listInboxEvents,
  type Provider,
  replayInboxEvent,
  replayInboxEvents,
  requeueInboxEvent,
} from '@tally/billing-core';
import {
  baseEnvSchema,
  createInboxQueue,
  createRedisConnection,
  handOffInboxEvents,
  parseEnv,
  waitUntilReady,
} from '@tally/platform';

const envSchema = baseEnvSchema.pick({ DATABASE_URL: true, REDIS_URL: true, QUEUE_PREFIX: true });

/** `tally events list`: the newest inbox events with status, attempts and last error. */
export async function runEventsList(filter: {
  provider?: Provider;
  status?: InboxStatus;
  type?: string;
  user?: string;
  outcome?: string;
  limit: number;
}): Promise<void> {
  const env = parseEnv(envSchema, process.env);
  const database = createDb({ connectionString: env.DATABASE_URL, maxConnections: 1 });
  try {
    const { events } = await listInboxEvents(database.db, {
      provider: filter.provider,
      status: filter.status,
      type: filter.type,
      userId: filter.user,
      outcomeCode: filter.outcome,
      limit: filter.limit,
    });
    for (const event of events) {
      process.stdout.write(
        `${event.id}\t${event.provider}\t${event.provider_event_id}\t${event.type}\t${event.user_id ?? '-'}\t${event.status}\t${event.attempts}\t${event.outcome_code ?? '-'}\t${event.last_error ?? event.outcome_detail ?? ''}\n`,
      );
    }
  } finally {
    await database.close();
  }
}

/** `tally requeue <id>`: puts a parked event back to work (attempts and error reset). */
export async function runRequeue(inboxEventId: number): Promise<void> {
  const env = parseEnv(envSchema, process.env);
  const database = createDb({ connectionString: env.DATABASE_URL, maxConnections: 1 });
  const redis = createRedisConnection(env.REDIS_URL, 'producer');
  const queue = createInboxQueue(redis, env.QUEUE_PREFIX);
  try {
    const id = await requeueInboxEvent(database.db, inboxEventId);
    if (id === null) {
      process.stderr.write(`inbox event ${inboxEventId} is not parked (or does not exist); nothing requeued\n`);
      process.exitCode = 1;
      return;
    }
    const delivery = await handOffInboxEvents(queue, database.db, [id]);
    process.stdout.write(
      delivery.enqueued === 1
        ? `requeued ${id}\n`
        : `requeued ${id}; the queue is unreachable, the relay will enqueue it\n`,
    );
  } finally {
    await queue.close().catch(() => undefined);
    redis.disconnect();
    await database.close();
  }
}

/**
 * `tally replay <id>` or `tally replay --type … --status …`: re-runs finished (processed or
 * ignored) events through the current handlers. Safe: every effect is keyed by its reference.
 */
export async function runReplay(
  inboxEventId: number | undefined,
  filter: {
    provider?: Provider;
    status?: 'processed' | 'ignored';
    type?: string;
    user?: string;
    outcome?: string;
    limit: number;
  },
): Promise<void> {
  const env = parseEnv(envSchema, process.env);
  const database = createDb({ connectionString: env.DATABASE_URL, maxConnections: 1 });
  try {
    let ids: number[];
    if (inboxEventId !== undefined) {
      const id = await replayInboxEvent(database.db, inboxEventId);
      if (id === null) {
        process.stderr.write(
          `inbox event ${inboxEventId} is not processed or ignored (or does not exist); nothing replayed\n`,
        );
        process.exitCode = 1;
        return;
      }
      ids = [id];
    } else {
      if (!filter.provider && !filter.type && !filter.user && !filter.outcome && !filter.status) {
        throw new Error(
          'give an inbox event id, or at least one filter (--provider, --type, --status, --user, --outcome)',
        );
      }
      ids = await replayInboxEvents(database.db, {
        provider: filter.provider,
        status: filter.status,
        type: filter.type,
        userId: filter.user,
        outcomeCode: filter.outcome,
        limit: filter.limit,
      });
    }
    await handToQueue(env, database, ids, 'replayed');
  } finally {
    await database.close();
  }
}

/** Enqueues reset rows; when Redis is unreachable the relay enqueues them later. */
async function handToQueue(
  env: { REDIS_URL: string; QUEUE_PREFIX: string },
  database: ReturnType<typeof createDb>,
  ids: number[],
  verb: string,
): Promise<void> {
  if (ids.length === 0) {
    process.stdout.write(`${verb} 0 events\n`);
    return;
  }
  const redis = createRedisConnection(env.REDIS_URL, 'producer');
  const queue = createInboxQueue(redis, env.QUEUE_PREFIX);
  try {
    await waitUntilReady(redis, 3_000);
    const delivery = await handOffInboxEvents(queue, database.db, ids);
    process.stdout.write(`${verb} ${ids.length} event(s): ${ids.join(' ')}\n`);
    if (delivery.deferred > 0)
      process.stdout.write(`the queue is unreachable; the relay will enqueue ${delivery.deferred} of them\n`);
  } finally {
    await queue.close().catch(() => undefined);
    await redis.quit().catch(() => redis.disconnect());
  }
}
