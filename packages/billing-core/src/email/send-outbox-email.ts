import { sqlMilliseconds } from '@tally/platform/db';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema';
import { toErrorText } from '../errors';
import type { Mailer } from '../ports/mailer';
import { type BackoffSettings, computeBackoffDelayMs } from '../scheduling/backoff';

export type SendOutboxEmailResult =
  | { kind: 'sent' | 'skipped'; emailId: number }
  /** Nothing to do: already sent, not due, or another worker holds it. */
  | { kind: 'not-claimed'; emailId: number }
  /** The send failed: retried after delayMs, or failed for good once the budget is spent. */
  | { kind: 'failed'; emailId: number; error: unknown; parked: boolean; delayMs: number };

/**
 * Sends one confirmation email from the outbox. Claims the row (pending and due → processing,
 * attempts + 1), sends outside any transaction, then marks it sent. A failure puts the row back
 * to pending with a backoff (failed after maxAttempts); it only ever touches this row, never a
 * payment or the ledger. A row without an address is marked skipped. At-least-once: a worker
 * dying between the send and the mark can send twice; the Message-ID lets mail systems dedupe.
 */
export async function sendOutboxEmail(
  deps: {
    db: Kysely<DB>;
    mailer: Mailer;
    /** EMAIL_MAX_ATTEMPTS and EMAIL_BACKOFF_*: the worker's config schema holds the defaults. */
    maxAttempts: number;
    backoff: BackoffSettings;
    /** A row `processing` this long is taken again (its worker died mid-send): RELAY_PROCESSING_STALE_AFTER_MS. */
    processingStaleAfterMs: number;
  },
  emailId: number,
): Promise<SendOutboxEmailResult> {
  const claimed = await deps.db
    .updateTable('email_outbox')
    .set({ status: 'processing', attempts: sql`attempts + 1`, updated_at: sql`now()` })
    .where('id', '=', emailId)
    .where((eb) =>
      eb.or([
        eb.and([
          eb('status', '=', 'pending'),
          eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', sql<Date>`now()`)]),
        ]),
        // A worker died mid-send; the relay hands such rows back after its processing timeout.
        eb.and([
          eb('status', '=', 'processing'),
          eb('updated_at', '<', sql<Date>`now() - ${sqlMilliseconds(deps.processingStaleAfterMs)}`),
        ]),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return { kind: 'not-claimed', emailId };
  if (claimed.to_address === null) {
    await deps.db
      .updateTable('email_outbox')
      .set({ status: 'skipped', last_error: 'no email address known for this payment', updated_at: sql`now()` })
      .where('id', '=', emailId)
      .execute();
    return { kind: 'skipped', emailId };
  }
  try {
    await deps.mailer.send({
      to: claimed.to_address,
      subject: claimed.subject,
      text: claimed.body,
      messageId: `<tally-payment-${claimed.payment_id}@tally.local>`,
    });
  } catch (error) {
    const maxAttempts = deps.maxAttempts;
    const parked = claimed.attempts >= maxAttempts;
    const delayMs = parked ? 0 : computeBackoffDelayMs(claimed.attempts, deps.backoff);
    await deps.db
      .updateTable('email_outbox')
      .set({
        status: parked ? 'failed' : 'pending',
        last_error: toErrorText(error),
        next_attempt_at: parked ? null : sql`now() + ${sqlMilliseconds(delayMs)}`,
        enqueued_at: sql`now()`,
        updated_at: sql`now()`,
      })
      .where('id', '=', emailId)
      .where('status', '=', 'processing')
      .execute();
    return { kind: 'failed', emailId, error, parked, delayMs };
  }
  await deps.db
    .updateTable('email_outbox')
    .set({ status: 'sent', sent_at: sql`now()`, last_error: null, next_attempt_at: null, updated_at: sql`now()` })
    .where('id', '=', emailId)
    .execute();
  return { kind: 'sent', emailId };
}
