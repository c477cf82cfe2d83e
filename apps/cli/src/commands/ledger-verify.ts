import { createDb, verifyLedger } from '@tally/billing-core';
import { baseEnvSchema, parseEnv } from '@tally/platform';

/** `tally ledger verify`: checks balances against their entries; exits 1 on any discrepancy. */
export async function runLedgerVerify(): Promise<void> {
  const { DATABASE_URL } = parseEnv(baseEnvSchema.pick({ DATABASE_URL: true }), process.env);
  const database = createDb({ connectionString: DATABASE_URL, maxConnections: 1 });
  try {
    const result = await verifyLedger(database.db);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (!result.ok) process.exitCode = 1;
  } finally {
    await database.close();
  }
}
