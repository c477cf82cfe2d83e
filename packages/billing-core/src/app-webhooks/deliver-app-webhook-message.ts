import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { AppWebhookMessageRow, DB } from '../db/schema';
import { toErrorText } from '../errors';
import type { AppWebhookSender } from '../ports/app-webhook-sender';
import { toAppWebhookBody } from './app-webhook-body';
import { toWebhookId } from './webhook-id';

export interface DeliverAppWebhookDeps {
  db: Kysely<DB>;
  sender: AppWebhookSender;
  /** APP_WEBHOOK_RETRY_SCHEDULE_MS: the wait after each failed attempt; `failed` once it is spent. */
  retryScheduleMs: readonly number[];
  /** A message processing this long (its worker died mid-send) may be claimed again: RELAY_PROCESSING_STALE_AFTER_MS. */
  processingStaleAfterMs: number;
}

/** A blocked message re-checks at least this often (a finished predecessor also wakes it at once). */
export const BLOCKED_RECHECK_MIN_MS = 1_000;
export const BLOCKED_RECHECK_MAX_MS = 60_000;

export type DeliverAppWebhookResult =
  | { kind: 'delivered'; message: AppWebhookMessageRow; statusCode: number; nextOfUser: number | undefined }
  /** The attempt failed; the message is pending again, due after delayMs. */
  | { kind: 'retry'; message: AppWebhookMessageRow; delayMs: number; failure: string }
  /** The attempt failed and the schedule is spent: the message is `failed` (a redeliver starts it again). */
  | { kind: 'failed'; message: AppWebhookMessageRow; failure: string; nextOfUser: number | undefined }
  /** An earlier message of the same user is pending or processing: this one waits (per-user order). */
  | { kind: 'blocked'; messageId: number; blockedBy: number; delayMs: number }
  /** Pending but not due yet (waiting out its retry delay). */
  | { kind: 'not-due'; messageId: number; delayMs: number }
  /** Nothing to do: delivered, failed, gone, or another worker holds it (a newer claim superseded this attempt). */
  | { kind: 'not-claimed'; messageId: number };

/**
 * Delivers one app webhook message. Claims it (pending and due, or processing for longer than
 * processingStaleAfterMs → processing, attempts + 1) only when no earlier message of its user is
 * pending or processing (claimable, below). Sends outside any transaction, then records the
 * outcome with a conditional update on `processing`. At least once: a worker dying between the
 * answer and the record sends the message again later, under the same webhook-id. Touches only
 * this table.
 */
export async function deliverAppWebhookMessage(
  deps: DeliverAppWebhookDeps,
  messageId: number,
): Promise<DeliverAppWebhookResult> {
  const claimed = await claimMessage(deps, messageId);
  if (claimed.kind !== 'claimed') return claimed;
  return attemptDelivery(deps, messageId, claimed.message);
}

/** Why a job did not get its message. */
type Unclaimed = Extract<DeliverAppWebhookResult, { kind: 'blocked' | 'not-due' | 'not-claimed' }>;

/** Claims tried in a row while the reason read between them says "claimable now". */
const CLAIM_ROUNDS = 3;

/**
 * The claim, and when it fails, why. The reason is read in a second statement, so what blocked
 * the claim may be gone by then: a predecessor delivered in between (whose wake-up found this
 * job still running and left it), or a retry delay just run out. The message is then claimable,
 * and ending the job as not claimed would strand it until the relay's stale-stamp pass; so the
 * claim is tried again. After CLAIM_ROUNDS such races in a row the job re-checks after the
 * blocked minimum instead.
 */
async function claimMessage(
  deps: DeliverAppWebhookDeps,
  messageId: number,
): Promise<{ kind: 'claimed'; message: AppWebhookMessageRow } | Unclaimed> {
  const claimableSql = claimable(deps.processingStaleAfterMs);
  for (let round = 1; ; round += 1) {
    const claimed = (
      await sql<AppWebhookMessageRow>`
        UPDATE app_webhook_messages m
           SET status = 'processing', attempts = m.attempts + 1, updated_at = now()
         WHERE m.id = ${messageId} AND ${claimableSql}
        RETURNING m.*`.execute(deps.db)
    ).rows[0];
    if (claimed) return { kind: 'claimed', message: claimed };
    const why = await whyNotClaimed(deps.db, messageId, claimableSql);
    if (why.kind !== 'claimable') return why;
    if (round >= CLAIM_ROUNDS) return { kind: 'not-due', messageId, delayMs: BLOCKED_RECHECK_MIN_MS };
  }
}

/**
 * The claim's condition on row `m`: pending and due, or processing for longer than the stale
 * window (its worker died mid-send); and no earlier message of its user pending or processing.
 * That NOT EXISTS is what keeps one user's messages in order, whatever the queue does.
 */
function claimable(processingStaleAfterMs: number) {
  const processingStale = sql`now() - ${sqlMilliseconds(processingStaleAfterMs)}`;
  // guard: app-webhook-user-order
  return sql<boolean>`((m.status = 'pending' AND (m.next_attempt_at IS NULL OR m.next_attempt_at <= now()))
              OR (m.status = 'processing' AND m.updated_at < ${processingStale}))
         AND NOT EXISTS (
               SELECT 1 FROM app_webhook_messages earlier
                WHERE earlier.user_id = m.user_id AND earlier.id < m.id
                  AND earlier.status IN ('pending', 'processing'))`;
}

async function attemptDelivery(
  deps: DeliverAppWebhookDeps,
  messageId: number,
  claimed: AppWebhookMessageRow,
): Promise<DeliverAppWebhookResult> {
  const attempt = await deps.sender.send({
    webhookId: toWebhookId(claimed.message_id),
    body: toAppWebhookBody(claimed),
  });
  if (attempt.kind === 'delivered') {
    const message = await finish(deps.db, messageId, claimed.attempts, {
      status: 'delivered',
      last_status_code: attempt.statusCode,
      last_error: null,
      next_attempt_at: null,
      delivered_at: sql<Date>`now()`,
    });
    if (!message) return { kind: 'not-claimed', messageId };
    return {
      kind: 'delivered',
      message,
      statusCode: attempt.statusCode,
      nextOfUser: await nextOfUser(deps.db, claimed),
    };
  }
  const failure =
    attempt.kind === 'rejected'
      ? toErrorText(`HTTP ${attempt.statusCode}: ${attempt.bodyExcerpt}`)
      : toErrorText(attempt.error);
  const statusCode = attempt.kind === 'rejected' ? attempt.statusCode : null;
  const delayMs = deps.retryScheduleMs[claimed.attempts - 1];
  if (delayMs === undefined) {
    const message = await finish(deps.db, messageId, claimed.attempts, {
      status: 'failed',
      last_status_code: statusCode,
      last_error: failure,
      next_attempt_at: null,
    });
    if (!message) return { kind: 'not-claimed', messageId };
    return { kind: 'failed', message, failure, nextOfUser: await nextOfUser(deps.db, claimed) };
  }
  const message = await finish(deps.db, messageId, claimed.attempts, {
    status: 'pending',
    last_status_code: statusCode,
    last_error: failure,
    next_attempt_at: sql<Date>`now() + ${sqlMilliseconds(delayMs)}`,
    enqueued_at: sql<Date>`now()`,
  });
  if (!message) return { kind: 'not-claimed', messageId };
  return { kind: 'retry', message, delayMs, failure };
}

type Finish = {
  status: 'delivered' | 'failed' | 'pending';
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: ReturnType<typeof sql<Date>> | null;
  delivered_at?: ReturnType<typeof sql<Date>>;
  enqueued_at?: ReturnType<typeof sql<Date>>;
};

/**
 * Records an attempt's outcome; only while the message is still this attempt's: processing, and
 * not claimed again since (attempts unchanged). An attempt that outlived the processing window
 * was superseded by a newer claim, and its outcome must not overwrite the newer attempt's state
 * (a late failure would put a message back to pending, or to failed, while the newer attempt is
 * delivering it). Undefined: superseded or gone; the newer attempt records its own outcome.
 */
function finish(
  db: Kysely<DB>,
  messageId: number,
  attempts: number,
  values: Finish,
): Promise<AppWebhookMessageRow | undefined> {
  // guard: app-webhook-attempt-fence
  return db
    .updateTable('app_webhook_messages')
    .set({ ...values, updated_at: sql<Date>`now()` })
    .where('id', '=', messageId)
    .where('status', '=', 'processing')
    .where('attempts', '=', attempts)
    .returningAll()
    .executeTakeFirst();
}

/** The user's next pending message after this one, which its worker wakes at once. */
async function nextOfUser(db: Kysely<DB>, message: AppWebhookMessageRow): Promise<number | undefined> {
  const next = await db
    .selectFrom('app_webhook_messages')
    .select('id')
    .where('user_id', '=', message.user_id)
    .where('id', '>', message.id)
    .where('status', 'in', ['pending', 'processing'])
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return next?.id;
}

/**
 * Whether an earlier message of this message's user is still pending or processing: the claim's
 * order condition, read on its own. A blocked message's worker asks it again after parking the
 * job, because the predecessor may have finished in between and its wake-up found the job still
 * running (and so could not promote it).
 */
export async function isAppWebhookMessageBlocked(db: Kysely<DB>, messageId: number): Promise<boolean> {
  const row = (
    await sql<{ blocked: boolean }>`
      SELECT EXISTS (
               SELECT 1 FROM app_webhook_messages earlier
                WHERE earlier.user_id = m.user_id AND earlier.id < m.id
                  AND earlier.status IN ('pending', 'processing')) AS blocked
        FROM app_webhook_messages m
       WHERE m.id = ${messageId}`.execute(db)
  ).rows[0];
  return row?.blocked ?? false;
}

async function whyNotClaimed(
  db: Kysely<DB>,
  messageId: number,
  claimableSql: ReturnType<typeof claimable>,
): Promise<Unclaimed | { kind: 'claimable' }> {
  const row = (
    await sql<{
      status: string;
      claimable: boolean;
      due_in_ms: number | null;
      blocked_by: number | null;
      blocker_due_in_ms: number | null;
    }>`
      SELECT m.status,
             ${claimableSql} AS claimable,
             (extract(epoch FROM (m.next_attempt_at - now())) * 1000)::float8 AS due_in_ms,
             b.id AS blocked_by,
             (extract(epoch FROM (b.next_attempt_at - now())) * 1000)::float8 AS blocker_due_in_ms
        FROM app_webhook_messages m
        LEFT JOIN LATERAL (
          SELECT earlier.id, earlier.next_attempt_at FROM app_webhook_messages earlier
           WHERE earlier.user_id = m.user_id AND earlier.id < m.id
             AND earlier.status IN ('pending', 'processing')
           ORDER BY earlier.id LIMIT 1) b ON true
       WHERE m.id = ${messageId}`.execute(db)
  ).rows[0];
  if (!row || (row.status !== 'pending' && row.status !== 'processing')) return { kind: 'not-claimed', messageId };
  // guard: app-webhook-claimable-retry
  if (row.claimable) return { kind: 'claimable' };
  if (row.blocked_by !== null) {
    const wait = Math.ceil(row.blocker_due_in_ms ?? 0) + BLOCKED_RECHECK_MIN_MS;
    return {
      kind: 'blocked',
      messageId,
      blockedBy: Number(row.blocked_by),
      delayMs: Math.min(Math.max(wait, BLOCKED_RECHECK_MIN_MS), BLOCKED_RECHECK_MAX_MS),
    };
  }
  if (row.status === 'pending' && row.due_in_ms !== null && row.due_in_ms > 0) {
    return { kind: 'not-due', messageId, delayMs: Math.ceil(row.due_in_ms) };
  }
  return { kind: 'not-claimed', messageId };
}
