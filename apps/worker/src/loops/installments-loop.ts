import { type GrantInstallmentsOptions, grantDueInstallments, type UnitOfWorkDeps } from '@tally/billing-core';
import type { Logger } from '@tally/platform';
import { type PeriodicLoop, runPeriodic } from './run-periodic';

export interface InstallmentsLoopOptions extends GrantInstallmentsOptions {
  intervalMs: number;
}

/** Grants due annual-plan installments every intervalMs (any number of replicas: SKIP LOCKED claims). */
export function startInstallmentsLoop(
  deps: UnitOfWorkDeps & { logger: Logger },
  options: InstallmentsLoopOptions,
): PeriodicLoop {
  return runPeriodic(
    'installments',
    options.intervalMs,
    async () => {
      for (;;) {
        const result = await grantDueInstallments(deps, options);
        if (result.claimed > 0) deps.logger.info({ ...result }, 'installments pass');
        if (result.claimed < options.batchSize) return;
      }
    },
    deps.logger,
  );
}
