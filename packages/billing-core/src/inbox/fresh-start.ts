import { sql } from 'kysely';

/** What requeue and replay reset: the row runs again as if new, with its history kept. */
export const freshStart = {
  status: 'received',
  attempts: 0,
  last_error: null,
  next_attempt_at: null,
  waiting_since: null,
  enqueued_at: sql<Date>`now()`,
  updated_at: sql<Date>`now()`,
} as const;
