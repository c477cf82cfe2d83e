import {
  adminActions,
  type InboxStatus,
  inboxRelaySource,
  listInboxEvents,
  type Provider,
  replayInboxEvent,
  replayInboxEvents,
  requeueInboxEvent,
  runAuditedAction,
} from '@tally/billing-core';
import { parseEnv } from '@tally/platform';
import { cliAuditRecord } from './audit-cli-action';
import { eventsEnvSchema, handOffOnce } from './hand-off-once';
import { fail, printJson } from './output';
import { withDatabase } from './unreachable-server';
import { formatTable, oneLine } from './user';

/** The filter options of `events list` and `replay` as the inbox's filter. */
function inboxFilterOf<Status>(filter: {
  provider?: Provider;
  status?: Status;
  type?: string;
  user?: string;
  outcome?: string;
  limit: number;
}) {
  return {
    provider: filter.provider,
    status: filter.status,
    type: filter.type,
    userId: filter.user,
    outcomeCode: filter.outcome,
    limit: filter.limit,
  };
}

/** `tally events list`: the newest inbox events with status, attempts and last error. */
export async function runEventsList(filter: {
  provider?: Provider;
  status?: InboxStatus;
  type?: string;
  user?: string;
  outcome?: string;
  limit: number;
  json?: boolean;
}): Promise<void> {
  const env = parseEnv(eventsEnvSchema, process.env);
  await withDatabase(env.DATABASE_URL, async (db) => {
    const { events } = await listInboxEvents(db, inboxFilterOf(filter));
    if (filter.json) {
      printJson({ events });
      return;
    }
    process.stdout.write(
      `${formatTable(
        ['ID', 'PROVIDER', 'EVENT ID', 'TYPE', 'USER', 'STATUS', 'ATTEMPTS', 'OUTCOME', 'SOURCE', 'ERROR / DETAIL'],
        events.map((event) => [
          String(event.id),
          event.provider,
          event.provider_event_id,
          event.type,
          event.user_id ?? '-',
          event.status,
          String(event.attempts),
          event.outcome_code ?? '-',
          event.source,
          oneLine(event.last_error ?? event.outcome_detail ?? null, 100),
        ]),
      )}\n`,
    );
  });
}

/** `tally requeue <id>`: puts a parked event back to work (attempts and error reset). */
export async function runRequeue(inboxEventId: number, options: { json?: boolean } = {}): Promise<void> {
  const env = parseEnv(eventsEnvSchema, process.env);
  await withDatabase(env.DATABASE_URL, async (db) => {
    const target = { kind: 'inbox_event', id: String(inboxEventId) };
    // The fresh start and its audit row commit together; the hand-off to the queue follows.
    const { result: id } = await runAuditedAction(
      db,
      (trx) => requeueInboxEvent(trx, inboxEventId),
      (id) =>
        cliAuditRecord({
          action: adminActions.inboxRequeue,
          target,
          outcome: id === null ? 'not_parked' : 'ok',
          answer: id === null ? undefined : { requeued: 1, ids: [id] },
        }),
    );
    if (id === null) {
      fail(options, 'not_parked', `inbox event ${inboxEventId} is not parked (or does not exist); nothing requeued`);
      return;
    }
    const delivery = await handOffOnce(env, db, inboxRelaySource, [id]);
    warnQueueUnreachable(delivery);
    if (options.json) {
      printJson({ requeued: 1, ids: [id], enqueued: delivery.enqueued, deferred: delivery.deferred });
      return;
    }
    process.stdout.write(delivery.enqueued === 1 ? `requeued ${id}\n` : `requeued ${id}; the relay will enqueue it\n`);
  });
}

/**
 * Says on stderr which Redis could not be reached and why, when rows were left to the relay (the
 * command still succeeds: the rows are safe in Postgres, and stdout keeps its documented shape).
 */
function warnQueueUnreachable(delivery: { deferred: number; queueError?: string }): void {
  if (delivery.deferred > 0 && delivery.queueError) {
    process.stderr.write(`tally: ${delivery.queueError}; the relay will enqueue ${delivery.deferred} event(s)\n`);
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
    json?: boolean;
  },
): Promise<void> {
  const env = parseEnv(eventsEnvSchema, process.env);
  await withDatabase(env.DATABASE_URL, async (db) => {
    if (
      inboxEventId === undefined &&
      !filter.provider &&
      !filter.type &&
      !filter.user &&
      !filter.outcome &&
      !filter.status
    ) {
      throw new Error(
        'give an inbox event id, or at least one filter (--provider, --type, --status, --user, --outcome)',
      );
    }
    // The replay and its audit row commit together; the hand-off to the queue follows.
    const { result: ids } = await runAuditedAction(
      db,
      async (trx) => {
        if (inboxEventId === undefined) {
          return replayInboxEvents(trx, inboxFilterOf(filter));
        }
        const id = await replayInboxEvent(trx, inboxEventId);
        return id === null ? null : [id];
      },
      (ids) =>
        cliAuditRecord({
          action: inboxEventId !== undefined ? adminActions.inboxReplay : adminActions.inboxReplayByFilter,
          target: inboxEventId !== undefined ? { kind: 'inbox_event', id: String(inboxEventId) } : null,
          request:
            inboxEventId !== undefined
              ? undefined
              : {
                  provider: filter.provider,
                  status: filter.status,
                  type: filter.type,
                  userId: filter.user,
                  outcome: filter.outcome,
                  limit: filter.limit,
                },
          outcome: ids === null ? 'not_finished' : 'ok',
          answer: ids === null ? undefined : { replayed: ids.length, ids },
        }),
    );
    if (ids === null) {
      fail(
        filter,
        'not_finished',
        `inbox event ${inboxEventId} is not processed or ignored, lost its body to retention, or does not exist; nothing replayed`,
      );
      return;
    }
    if (ids.length === 0) {
      if (filter.json) printJson({ replayed: 0, ids: [], enqueued: 0, deferred: 0 });
      else process.stdout.write('replayed 0 events\n');
      return;
    }
    const delivery = await handOffOnce(env, db, inboxRelaySource, ids);
    warnQueueUnreachable(delivery);
    if (filter.json) {
      printJson({ replayed: ids.length, ids, enqueued: delivery.enqueued, deferred: delivery.deferred });
      return;
    }
    process.stdout.write(`replayed ${ids.length} event(s): ${ids.join(' ')}\n`);
    if (delivery.deferred > 0) {
      process.stdout.write(`the relay will enqueue ${delivery.deferred} of them\n`);
    }
  });
}
