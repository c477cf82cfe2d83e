import { findInboxEvent } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { fail } from './output';
import { withDatabase } from './unreachable-server';

/**
 * `tally events show <id> [--json]`: one inbox event with its raw body. Exit 1 (message on
 * stderr) when it does not exist.
 */
export async function runEventsShow(inboxEventId: number, options: { json?: boolean }): Promise<void> {
  const { DATABASE_URL } = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  await withDatabase(DATABASE_URL, async (db) => {
    const event = await findInboxEvent(db, inboxEventId);
    if (!event) {
      fail(options, 'not_found', `inbox event ${inboxEventId} does not exist`);
      return;
    }
    if (options.json) {
      process.stdout.write(`${JSON.stringify(event, null, 2)}\n`);
      return;
    }
    const { raw_body: rawBody, ...fields } = event;
    const width = Math.max(...Object.keys(fields).map((key) => key.length));
    for (const [key, value] of Object.entries(fields)) {
      const text = value instanceof Date ? value.toISOString() : value === null ? '-' : String(value);
      process.stdout.write(`${key.toUpperCase().padEnd(width)}  ${text}\n`);
    }
    let body = rawBody ?? '(pruned by retention)';
    try {
      if (rawBody !== null) body = JSON.stringify(JSON.parse(rawBody), null, 2);
    } catch {
      // Stored exactly as received; show it as it is.
    }
    process.stdout.write(`\nRAW BODY\n${body}\n`);
  });
}
