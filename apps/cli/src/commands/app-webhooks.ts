import {
  type AppWebhookMessageType,
  adminActions,
  appWebhookSource,
  findAppWebhookMessage,
  listAppWebhookMessages,
  parseWebhookId,
  redeliverAppWebhookMessage,
  runAuditedAction,
  toAppWebhookBody,
  toAppWebhookMessageView,
} from '@tally/billing-core';
import { parseEnv } from '@tally/platform';
import { cliAuditRecord } from './audit-cli-action';
import { eventsEnvSchema, handOffOnce } from './hand-off-once';
import { fail, printJson } from './output';
import { withDatabase } from './unreachable-server';
import { formatTable, oneLine } from './user';

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
          oneLine(message.lastError),
        ]),
      )}\n`,
    );
  });
}

/** `tally app-webhooks show <id>`: one message (its `msg_…` webhook-id) with the body as sent. */
export async function runAppWebhooksShow(id: string, options: { json?: boolean }): Promise<void> {
  const env = parseEnv(eventsEnvSchema, process.env);
  const uuid = messageUuidOrFail(id, options);
  if (uuid === undefined) return;
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
  const uuid = messageUuidOrFail(id, options);
  if (uuid === undefined) return;
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
    const { enqueued, alreadyQueued, deferred } = await handOffOnce(env, db, appWebhookSource, [result.message.id]);
    const delivery = { enqueued, alreadyQueued, deferred };
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

/** The message's uuid from its `msg_…` webhook-id; undefined (the command failed) when it is not one. */
function messageUuidOrFail(id: string, options: { json?: boolean }): string | undefined {
  const uuid = parseWebhookId(id);
  if (uuid === undefined) {
    fail(options, 'invalid_request', `${id} is not a message id (msg_ and 32 hex digits, the webhook-id)`);
  }
  return uuid;
}
