import { openMissingLots } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';
import { printJson } from './output';
import { withDatabase } from './unreachable-server';

/**
 * `tally ledger open-lots [--batch-size N] [--json]`: gives every wallet whose balance its lots do
 * not hold yet (a balance from before lots, or an old replica's posting) its opening lot, in short
 * transactions of at most N wallets that skip wallets a posting holds (docs/lots.md). Run once
 * every replica runs the code with lots; safe to run again (it opens only what is missing).
 */
export async function runLedgerOpenLots(options: { batchSize: number; json?: boolean }): Promise<void> {
  const { DATABASE_URL } = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  await withDatabase(DATABASE_URL, async (db) => {
    let opened = 0;
    let batches = 0;
    for (;;) {
      const count = await openMissingLots(db, { batchSize: options.batchSize });
      if (count === 0) break;
      opened += count;
      batches += 1;
    }
    if (options.json) printJson({ opened, batches });
    else process.stdout.write(`opened ${opened} wallets' lots in ${batches} batches\n`);
  });
}
