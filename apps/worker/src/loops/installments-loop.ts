import { type GrantInstallmentsOptions, grantDueInstallments } from '@tally/billing-core';
import type { SweepDeps } from './run-periodic';

export interface InstallmentsLoopOptions extends GrantInstallmentsOptions {
  intervalMs: number;
}

/** Grants due annual-plan installments, batch after batch (any number of replicas: SKIP LOCKED claims). */
export async function grantInstallmentsPass(deps: SweepDeps, options: InstallmentsLoopOptions): Promise<void> {
  for (;;) {
    const result = await grantDueInstallments(deps, options);
    if (result.claimed > 0) deps.logger.info({ ...result }, 'installments pass');
    if (result.claimed < options.batchSize) return;
  }
}
