import { verifyLedger } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { printJson } from './output';
import { withDatabase } from './unreachable-server';
import { formatTable } from './user';

/**
 * `tally ledger verify [--json]`: checks balances against their entries (the same report as
 * GET /admin/ledger/verify); exits 1 on any discrepancy.
 */
export async function runLedgerVerify(options: { json?: boolean } = {}): Promise<void> {
  const { DATABASE_URL } = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  await withDatabase(DATABASE_URL, async (db) => {
    const result = await verifyLedger(db);
    if (options.json) printJson(result);
    else {
      process.stdout.write(
        `${result.ok ? 'ok' : 'DISCREPANCIES'}: ${result.walletsChecked} wallets, ${result.entriesChecked} entries checked\n`,
      );
      if (!result.ok) {
        process.stdout.write(
          `${formatTable(
            ['USER', 'PROBLEM', 'DETAIL'],
            result.discrepancies.map((found) => [found.userId, found.problem, found.detail]),
          )}\n`,
        );
      }
    }
    if (!result.ok) process.exitCode = 1;
  });
}
