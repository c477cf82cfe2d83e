import {
  type AppWebhookMessageType,
  adminActions,
  appWebhookSource,
  type DB,
  findAppWebhookMessage,
  listAppWebhookMessages,
  parseWebhookId,
  queueCatalog,
  redeliverAppWebhookMessage,
  runAuditedAction,
  toAppWebhookBody,
  toAppWebhookMessageView,
} from '@tally/billing-core';
import {
  createProducerQueue,
  createRedisConnection,
  type Database,
  handOffRows,
  parseEnv,
  waitUntilReady,
} from '@tally/platform';
import type { z } from 'zod';
import { cliAuditRecord } from './audit-cli-action';
import { eventsEnvSchema } from './events';
import { fail, printJson } from './output';
import { withDatabase } from './unreachable-server';
import { formatTable } from './user';

const REDIS_READY_TIMEOUT_MS = 3_000;

/** `tally app-webhooks list`: the newest outbound messages, as `GET /admin/app-webhooks/messages` shows them. */
export async function runAppWebhooksList(filter: {
  user?: string;
  type?: AppWebhookMessageType;
  status?: 'pending' | 'delivered' | 'failed';
  limit: number;
  json?: boolean;
}): Promise<void> {
  const env = parseEnv(eventsEnvSchema, process.env);
  await withDatabase(env.DATABASE_URL, async (db) => {
    const page = await listAppWebhookMessages(db, {
      userId: filter.user,
      type: filter.type,
      status: filter.status,
      limit: filter.limit,
    });
    const messages = page.messages.map(toAppWebhookMessageView);
    if (filter.json) {
      printJson({ messages, nextCursor: page.nextCursor === null ? null : String(page.nextCursor) });
      return;
    }
    const oneLine = (text: string) => {
      const flat = text.replace(/\s+/g, ' ');
      return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
    };
    process.stdout.write(
      `${formatTable(
        ['ID', 'TYPE', 'USER', 'STATUS', 'ATTEMPTS', 'LAST STATUS', 'CREATED', 'NEXT ATTEMPT', 'LAST ERROR'],
        messages.map((message) => [
          message.id,
          message.type,
          message.userId,
          message.status,
          String(message.attempts),
          message.lastStatusCode === null ? '-' : String(message.lastStatusCode),
          message.createdAt,
          message.nextAttemptAt ?? '-',
          oneLine(message.lastError ?? ''),
        ]),
      )}\n`,
    );
  });
}

/** `tally app-webhooks show <id>`: one message (its `msg_…` webhook-id) with the body as sent. */
export async function runAppWebhooksShow(id: string, options: { json?: boolean }): Promise<void> {
  const env = parseEnv(eventsEnvSchema, process.env);
  const uuid = parseWebhookId(id);
  if (uuid === undefined) {
    fail(options, 'invalid_request', `${id} is not a message id (msg_ and 32 hex digits, the webhook-id)`);
    return;
  }
  await withDatabase(env.DATABASE_URL, async (db) => {
    const message = await findAppWebhookMessage(db, uuid);
    if (!message) {
      fail(options, 'not_found', `app webhook message ${id} does not exist`);
      return;
    }
    const view = toAppWebhookMessageView(message);
    const body = toAppWebhookBody(message);
    if (options.json) {
      printJson({ ...view, body });
      return;
    }
    const width = Math.max(...Object.keys(view).map((key) => key.length));
    for (const [key, value] of Object.entries(view)) {
      process.stdout.write(`${key.padEnd(width)}  ${value === null ? '-' : String(value)}\n`);
    }
    process.stdout.write(`\nBODY\n${JSON.stringify(JSON.parse(body), null, 2)}\n`);
  });
}

/** `tally app-webhooks redeliver <id>`: a delivered or failed message goes out again (same webhook-id). */
export async function runAppWebhooksRedeliver(id: string, options: { json?: boolean }): Promise<void> {
  const env = parseEnv(eventsEnvSchema, process.env);
  const uuid = parseWebhookId(id);
  if (uuid === undefined) {
    fail(options, 'invalid_request', `${id} is not a message id (msg_ and 32 hex digits, the webhook-id)`);
    return;
  }
  await withDatabase(env.DATABASE_URL, async (db) => {
    // The reset and its audit row commit together; the hand-off to the queue follows.
    const { result } = await runAuditedAction(
      db,
      (trx) => redeliverAppWebhookMessage(trx, uuid),
      (result) =>
        cliAuditRecord({
          action: adminActions.appWebhookRedeliver,
          target: { kind: 'app_webhook_message', id },
          outcome: result.kind === 'redelivering' ? 'ok' : result.kind === 'pending' ? 'not_finished' : 'not_found',
          answer:
            result.kind === 'redelivering'
              ? { redelivered: 1, message: toAppWebhookMessageView(result.message) }
              : undefined,
        }),
    );
    if (result.kind === 'not-found') {
      fail(options, 'not_found', `app webhook message ${id} does not exist`);
      return;
    }
    if (result.kind === 'pending') {
      fail(
        options,
        'not_finished',
        `app webhook message ${id} is pending; only delivered or failed messages are redelivered`,
      );
      return;
    }
    const delivery = await handOffOnce(env, db, [result.message.id]);
    if (options.json) {
      printJson({ redelivered: 1, message: toAppWebhookMessageView(result.message), ...delivery });
      return;
    }
    process.stdout.write(
      delivery.enqueued + delivery.alreadyQueued === 1
        ? `redelivering ${id}\n`
        : `redelivering ${id}; the relay will enqueue it\n`,
    );
  });
}

/** Hands the rows to the app-webhooks queue; when Redis does not answer in time they are left to the relay. */
async function handOffOnce(
  env: z.output<typeof eventsEnvSchema>,
  db: Database<DB>['db'],
  ids: number[],
): Promise<{ enqueued: number; alreadyQueued: number; deferred: number }> {
  const redis = createRedisConnection(env.REDIS_URL, 'producer');
  redis.on('error', () => undefined);
  try {
    if (!(await waitUntilReady(redis, REDIS_READY_TIMEOUT_MS))) {
      await appWebhookSource.releaseHandOff(db, ids);
      return { enqueued: 0, alreadyQueued: 0, deferred: ids.length };
    }
    const queue = createProducerQueue(redis, env.QUEUE_PREFIX, queueCatalog.appWebhooks);
    try {
      const { enqueued, alreadyQueued, deferred } = await handOffRows(queue, appWebhookSource, db, ids);
      return { enqueued, alreadyQueued, deferred };
    } finally {
      await queue.close().catch(() => undefined);
    }
  } finally {
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }
}
