import { createDb, type InboxStatus, listInboxEvents, type Provider, requeueInboxEvent } from '@tally/billing-core';
import { baseEnvSchema, createInboxQueue, createRedisConnection, handOffInboxEvents, parseEnv } from '@tally/platform';

const envSchema = baseEnvSchema.pick({ DATABASE_URL: true, REDIS_URL: true, QUEUE_PREFIX: true });

/** `tally events list`: the newest inbox events with status, attempts and last error. */
export async function runEventsList(filter: {
  provider?: Provider;
  status?: InboxStatus;
  type?: string;
  user?: string;
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
      limit: filter.limit,
    });
    for (const event of events) {
      process.stdout.write(
        `${event.id}\t${event.provider}\t${event.provider_event_id}\t${event.type}\t${event.user_id ?? '-'}\t${event.status}\t${event.attempts}\t${event.last_error ?? event.outcome ?? ''}\n`,
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
