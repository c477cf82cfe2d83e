import { type CreditExpiryOptions, sweepCreditExpiry, type UnitOfWorkDeps } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface CreditExpiryLoopOptions extends CreditExpiryOptions {
  intervalMs: number;
}

/**
 * Every intervalMs: writes wallet.credits_expiring for lots about to expire, then expires (and
 * rolls over) the lots past their expiresAt (docs/lots.md). Any number of replicas: wallets are
 * claimed FOR UPDATE SKIP LOCKED, and each expiry is idempotent by its reference.
 */
export function startCreditExpiryLoop(
  deps: UnitOfWorkDeps & { logger: Logger },
  options: CreditExpiryLoopOptions,
): PeriodicLoop {
  return runPeriodic(
    'credit-expiry',
    options.intervalMs,
    async () => {
      const result = await sweepCreditExpiry(deps, options);
      if (result.notices + result.expired + result.rolledOver > 0)
        deps.logger.info({ ...result }, 'credit expiry pass');
    },
    deps.logger,
  );
}
