import { createDb, findUserSupportView, type UserSupportView } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';

/** Plain-text table: a header row, then one row per item, columns padded to their widest cell. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

const iso = (date: Date | null) => (date === null ? '-' : date.toISOString());
const oneLine = (text: string | null, max = 80) => {
  if (text === null) return '';
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** The support view as sections of plain-text tables. */
export function formatSupportView(view: UserSupportView): string {
  const out: string[] = [];
  out.push(`user ${view.userId}`);
  out.push(
    `wallet balance ${view.wallet.balance}; ledger sum ${view.ledger.sum} over ${view.ledger.total} entries${
      view.ledger.matchesBalance ? '' : '  MISMATCH: the balance differs from the ledger sum'
    }`,
  );
  out.push('', `events (${view.events.items.length} of ${view.events.total}, needing attention first)`);
  out.push(
    formatTable(
      [
        'ID',
        'ATTENTION',
        'PROVIDER',
        'EVENT ID',
        'TYPE',
        'STATUS',
        'ATTEMPTS',
        'OUTCOME',
        'RECEIVED',
        'ERROR / DETAIL',
      ],
      view.events.items.map((event) => [
        String(event.id),
        event.attention,
        event.provider,
        event.providerEventId,
        event.type,
        event.status,
        String(event.attempts),
        event.outcome?.code ?? '-',
        iso(event.receivedAt),
        oneLine(event.lastError ?? event.outcome?.detail ?? null),
      ]),
    ),
  );
  out.push('', `ledger (${view.ledger.entries.length} of ${view.ledger.total}, newest first)`);
  out.push(
    formatTable(
      ['ID', 'REFERENCE', 'AMOUNT', 'BEFORE', 'AFTER', 'REASON', 'EVENT', 'CREATED'],
      view.ledger.entries.map((entry) => [
        String(entry.id),
        entry.reference,
        String(entry.amount),
        String(entry.balanceBefore),
        String(entry.balanceAfter),
        entry.reason,
        entry.inboxEventId === null ? '-' : String(entry.inboxEventId),
        iso(entry.createdAt),
      ]),
    ),
  );
  out.push('', `subscription: ${view.subscription === null ? 'none' : JSON.stringify(view.subscription)}`);
  out.push(`payments: ${view.payments.length}; studio requests: ${view.studioRequests.length}`);
  out.push('', 'linked ids');
  out.push(
    formatTable(
      ['PROVIDER', 'KIND', 'ID', 'FIRST SEEN', 'LAST SEEN'],
      view.linkedIds.map((linked) => [
        linked.provider,
        linked.kind,
        linked.id,
        iso(linked.firstSeenAt),
        iso(linked.lastSeenAt),
      ]),
    ),
  );
  return `${out.join('\n')}\n`;
}

/** `tally user <id> [--json]`: the support view of one user, read from the database. */
export async function runUser(
  userId: string,
  options: { json?: boolean; eventLimit: number; ledgerLimit: number },
): Promise<void> {
  const { DATABASE_URL } = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  const database = createDb({ connectionString: DATABASE_URL, maxConnections: 1 });
  try {
    const view = await findUserSupportView(database.db, userId, {
      limits: { events: options.eventLimit, ledgerEntries: options.ledgerLimit },
    });
    process.stdout.write(options.json ? `${JSON.stringify(view, null, 2)}\n` : formatSupportView(view));
  } finally {
    await database.close();
  }
}
