import { type CreditExpiryOptions, sweepCreditExpiry } from '@tally/billing-core';
import type { SweepDeps } from './run-periodic';

export interface CreditExpiryLoopOptions extends CreditExpiryOptions {
  intervalMs: number;
}

/**
 * Writes wallet.credits_expiring for lots about to expire, then expires (and rolls over) the lots
 * past their expiresAt (docs/lots.md). Any number of replicas: wallets are claimed FOR UPDATE SKIP
 * LOCKED, and each expiry is idempotent by its reference.
 */
export async function creditExpiryPass(deps: SweepDeps, options: CreditExpiryLoopOptions): Promise<void> {
  const result = await sweepCreditExpiry(deps, options);
  if (result.notices + result.expired + result.rolledOver > 0) deps.logger.info({ ...result }, 'credit expiry pass');
}
